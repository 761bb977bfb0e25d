#include "bench/linux_ha_pair.h"

#include <nlohmann/json.hpp>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "cluster/topology.h"

namespace sluice::bench {
namespace {

using namespace std::chrono_literals;

const char* kRuleset = R"(table inet bench {
  chain forward { type filter hook forward priority 0; policy drop;
    ct state established,related counter accept
    ct state invalid counter drop
    iifname "lan0" oifname "wan0" ct state new counter accept
  }
}
)";
// Without it conntrack picks a mid-stream packet up as a new connection and
// the pair would look as if it synced what it did not.
const char* kStrictTcp = "net.netfilter.nf_conntrack_tcp_loose=0";

// keepalived passes "GROUP NAME STATE PRIORITY"; $1 is the conntrackd config.
const char* kNotify = R"(#!/bin/sh
conf=$1
state=$4
echo "$(date +%s.%N) $state" >> "$(dirname "$conf")/notify.log"
case "$state" in
  MASTER)
    conntrackd -C "$conf" -c
    conntrackd -C "$conf" -f
    conntrackd -C "$conf" -R
    conntrackd -C "$conf" -B ;;
  BACKUP)
    conntrackd -C "$conf" -t
    conntrackd -C "$conf" -n ;;
  FAULT)
    conntrackd -C "$conf" -t ;;
esac
exit 0
)";

// conntrackd's config lexer reads "fab0" as a hexadecimal number, so the
// fabric is named for it by an altname.
const char* kFabricAltname = "fabric";

std::string conntrackd_config(const std::string& dir, const std::string& self, const std::string& peer) {
    std::ostringstream c;
    c << "Sync {\n"
         "  Mode FTFW {\n    DisableExternalCache Off\n    CommitTimeout 1800\n    PurgeTimeout 5\n  }\n"
         "  UDP {\n"
      << "    IPv4_address " << self << "\n    IPv4_Destination_Address " << peer << "\n"
      << "    Port 3780\n    Interface " << kFabricAltname << "\n"
      << "    SndSocketBuffer 1249280\n    RcvSocketBuffer 1249280\n    Checksum on\n  }\n}\n"
         "General {\n  Systemd off\n  HashSize 32768\n  HashLimit 131072\n"
      << "  LogFile " << dir << "/conntrackd.log\n  Syslog off\n  LockFile " << dir << "/conntrackd.lock\n"
      << "  UNIX {\n    Path " << dir << "/conntrackd.ctl\n  }\n"
      << "  NetlinkBufferSize 2097152\n  NetlinkBufferSizeMaxGrowth 8388608\n"
         "  Filter From Userspace {\n    Address Ignore {\n      IPv4_address 127.0.0.1\n"
         "      IPv4_address 198.18.2.0/30\n      IPv6_address ::1\n    }\n  }\n}\n";
    return c.str();
}

std::string keepalived_config(const std::string& node, int priority, const std::string& notify,
                              const std::string& conntrackd_conf) {
    std::ostringstream k;
    k << "global_defs {\n  router_id " << node
      << "\n  script_user root\n  enable_script_security\n  vrrp_garp_master_repeat 4\n}\n"
      << "vrrp_sync_group pair {\n  group { lan wan }\n  notify \"" << notify << " " << conntrackd_conf
      << "\"\n}\n";
    auto instance = [&](const char* name, const char* dev, int vrid, const char* v4, const char* v6, int len6) {
        k << "vrrp_instance " << name << " {\n  state BACKUP\n  interface " << dev << "\n  virtual_router_id " << vrid
          << "\n  version 3\n  priority " << priority << "\n  advert_int 0.02\n"
          << "  virtual_ipaddress { " << v4 << "/24 }\n  virtual_ipaddress_excluded { " << v6 << "/" << len6
          << " }\n}\n";
    };
    instance("lan", "lan0", 51, cluster::kLanVip4, cluster::kLanVip6, 64);
    instance("wan", "wan0", 52, cluster::kWanVip4, cluster::kWanVip6, 64);
    return k.str();
}

}  // namespace

bool holds_address(const std::string& ip_json, const std::string& address) {
    auto doc = nlohmann::json::parse(ip_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_array()) return false;
    for (const auto& link : doc)
        for (const auto& a : link.value("addr_info", nlohmann::json::array()))
            if (a.value("local", "") == address) return true;
    return false;
}

LinuxHaPair::LinuxHaPair(Lab& lab) : lab_(lab) {}

LinuxHaPair::~LinuxHaPair() {
    for (auto& [name, n] : nodes_) {
        if (n.keepalived) (void)lab_.stop(*n.keepalived, 2s);
        if (n.conntrackd) (void)lab_.stop(*n.conntrackd, 2s);
    }
}

Status LinuxHaPair::start_node(Node& n, int index) {
    auto& nft = nft_[n.name] = std::make_unique<NftFirewall>(lab_, "inet bench", n.name);
    if (auto s = nft->load(kRuleset, {kStrictTcp}); !s) return with_context(n.name, s.error());
    if (auto s = lab_.must(n.name, {"ip", "link", "property", "add", "dev", "fab0", "altname", kFabricAltname}); !s)
        return s;
    const std::string self = index == 0 ? cluster::kFw0Fabric4 : cluster::kFw1Fabric4;
    const std::string peer = index == 0 ? cluster::kFw1Fabric4 : cluster::kFw0Fabric4;
    auto c = lab_.write_file(n.name + "/conntrackd.conf", conntrackd_config(n.dir, self, peer));
    if (!c) return c.error();
    n.conntrackd_conf = *c;
    auto k = lab_.write_file(n.name + "/keepalived.conf",
                             keepalived_config(n.name, index == 0 ? 200 : 100, notify_script_, *c));
    if (!k) return k.error();
    n.keepalived_conf = *k;
    auto ctd = lab_.start(n.name, {"conntrackd", "-C", n.conntrackd_conf}, n.name + "/conntrackd-out");
    if (!ctd) return ctd.error();
    n.conntrackd = *ctd;
    // conntrackd is ready when its control socket answers.
    for (int i = 0; i < 50; ++i) {
        auto r = lab_.run(n.name, {"conntrackd", "-C", n.conntrackd_conf, "-s"}, 5s);
        if (r && r->exit_status == 0) break;
        if (!lab_.running(*ctd))
            return make_error("conntrackd on " + n.name + " exited: " + read_text(ctd->log_path));
        std::this_thread::sleep_for(100ms);
    }
    auto ka = lab_.start(n.name,
                         {"keepalived", "--dont-fork", "--log-console", "--log-detail", "--vrrp", "-f",
                          n.keepalived_conf, "-p", n.dir + "/keepalived.pid", "-r", n.dir + "/vrrp.pid"},
                         n.name + "/keepalived-out");
    if (!ka) return ka.error();
    n.keepalived = *ka;
    return {};
}

Status LinuxHaPair::start() {
    auto script = lab_.write_file("ha-notify.sh", kNotify);
    if (!script) return script.error();
    notify_script_ = *script;
    if (auto s = lab_.must("", {"chmod", "0755", notify_script_}); !s) return s;
    int index = 0;
    for (const char* name : {"fw0", "fw1"}) {
        Node n;
        n.name = name;
        n.dir = lab_.tmp() + "/" + name;
        if (auto s = lab_.must("", {"mkdir", "-p", n.dir}); !s) return s;
        nodes_[name] = n;
        if (auto s = start_node(nodes_[name], index++); !s) return s;
    }
    for (int i = 0; i < 200; ++i) {
        auto h = holder();
        if (!h) return h.error();
        auto w = lab_.output("fw0", {"ip", "-j", "addr", "show", "dev", "wan0"});
        if (!w) return w.error();
        if (*h == "fw0" && holds_address(*w, cluster::kWanVip4) && became_master_at("fw0")) return {};
        for (auto& [name, n] : nodes_)
            if (!lab_.running(*n.keepalived))
                return make_error("keepalived on " + name + " exited: " + read_text(n.keepalived->log_path));
        std::this_thread::sleep_for(100ms);
    }
    return make_error("keepalived: fw0 did not take the virtual addresses within 20 s; fw0's log:\n" + logs("fw0"));
}

Result<std::string> LinuxHaPair::holder() {
    std::string who;
    for (const char* node : {"fw0", "fw1"}) {
        auto out = lab_.output(node, {"ip", "-j", "addr", "show", "dev", "lan0"});
        if (!out) return out.error();
        if (holds_address(*out, cluster::kLanVip4)) {
            if (!who.empty()) return std::string("both");
            who = node;
        }
    }
    return who;
}

// keepalived's parent, its VRRP child (its pid file) and conntrackd: the
// processes a node's crash takes. (They were started by a shell in the
// node, so they share no process group of their own to signal.)
std::vector<int> LinuxHaPair::daemon_pids(const std::string& node) const {
    const auto& n = nodes_.at(node);
    std::vector<int> pids;
    if (n.keepalived) {
        pids.push_back(n.keepalived->pid);
        std::istringstream in(read_text(n.dir + "/vrrp.pid"));
        int child = 0;
        if (in >> child && child > 0) pids.push_back(child);
    }
    if (n.conntrackd) pids.push_back(n.conntrackd->pid);
    return pids;
}

Status LinuxHaPair::freeze_daemons(const std::string& node) {
    for (int pid : daemon_pids(node))
        if (::kill(pid, SIGSTOP) != 0)
            return make_error("cannot SIGSTOP pid " + std::to_string(pid) + " on " + node + ": " + std::strerror(errno));
    return {};
}

Status LinuxHaPair::kill_daemons(const std::string& node) {
    for (int pid : daemon_pids(node)) ::kill(pid, SIGKILL);
    auto& n = nodes_.at(node);
    for (auto* p : {&n.keepalived, &n.conntrackd}) {
        if (!*p) continue;
        (void)lab_.stop(**p, 1s);  // reaps it
        p->reset();
    }
    return {};
}

Status LinuxHaPair::switch_over(const std::string& node) {
    auto& n = nodes_.at(node);
    if (!n.keepalived) return make_error("keepalived is not running on " + node);
    auto s = lab_.stop(*n.keepalived, 5s);
    n.keepalived.reset();
    return s;
}

Result<uint64_t> LinuxHaPair::counted_packets(const std::string& node) {
    return nft_.at(node)->counted_packets();
}

Result<uint64_t> LinuxHaPair::conntrack_entries(const std::string& node) {
    return nft_.at(node)->conntrack_count();
}

std::optional<double> LinuxHaPair::became_master_at(const std::string& node) const {
    std::istringstream in(read_text(nodes_.at(node).dir + "/notify.log"));
    std::optional<double> at;
    double t;
    std::string state;
    while (in >> t >> state)
        if (state == "MASTER") at = t;
    return at;
}

std::string LinuxHaPair::logs(const std::string& node) const {
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return "";
    std::string text;
    if (it->second.keepalived) text += read_text(it->second.keepalived->log_path);
    text += read_text(it->second.dir + "/conntrackd.log") + read_text(it->second.dir + "/notify.log");
    return text.size() > 3000 ? text.substr(text.size() - 3000) : text;
}

}  // namespace sluice::bench
