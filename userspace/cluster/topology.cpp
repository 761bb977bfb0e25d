#include "cluster/topology.h"

#include <filesystem>
#include <set>

#include "cluster/process.h"

namespace sluice::cluster {
namespace {

constexpr auto kIpTimeout = std::chrono::seconds(30);

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
}

bool is_ipv6(const std::string& address) {
    return address.find(':') != std::string::npos;
}

// Runs a command on this machine; an Error carrying its output if it fails.
Status must(const std::vector<std::string>& argv) {
    auto r = run_local(argv, kIpTimeout);
    if (!r) return r.error();
    if (r->exit_status != 0 || r->timed_out)
        return make_error("`" + shell_join(argv) + "` failed" + (r->timed_out ? " (timed out)" : "") + ": " +
                          trim(r->err.empty() ? r->out : r->err));
    return {};
}

std::vector<std::string> forwarding() {
    return {"net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"};
}

// LAN host and WAN host around firewall node `fw`, addresses and routes for
// the single-firewall shapes (single, single-dmz).
Topology single_shape(std::string name) {
    Topology t;
    t.name = std::move(name);
    t.nodes = {{"lan", {}, false}, {"fw", forwarding(), true}, {"wan", {}, false}};
    t.links = {{"fw", "lan0", "lan", "eth0", ""}, {"fw", "wan0", "wan", "eth0", ""}};
    t.addresses = {
        {"lan", "eth0", std::string(kLanHost4) + "/24"}, {"lan", "eth0", std::string(kLanHost6) + "/64"},
        {"fw", "lan0", std::string(kFw0Lan4) + "/24"},   {"fw", "lan0", std::string(kFw0Lan6) + "/64"},
        {"fw", "wan0", std::string(kFw0Wan4) + "/24"},   {"fw", "wan0", std::string(kFw0Wan6) + "/64"},
        {"wan", "eth0", std::string(kWanHost4) + "/24"}, {"wan", "eth0", std::string(kWanHost6) + "/64"},
    };
    t.routes = {{"lan", "default", kFw0Lan4},
                {"lan", "default", kFw0Lan6},
                {"wan", kLanNet4, kFw0Wan4},
                {"wan", kLanNet6, kFw0Wan6}};
    t.probe_from = "lan";
    t.probe_targets = {kWanHost4, kWanHost6};
    t.server_node = "wan";
    return t;
}

Topology make_cluster() {
    // No DAD anywhere: addresses are usable at once (the topology is ours alone).
    const std::vector<std::string> no_dad{"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> all = no_dad;
        all.insert(all.end(), extra.begin(), extra.end());
        return all;
    };
    Topology t;
    t.name = "cluster";
    // The switch carries frames only: no IPv6 of its own (no link-local chatter).
    t.nodes = {{"switch", with({"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"}), false},
               {"lan-host", no_dad, false},
               {"fw0", with(forwarding()), true},
               {"fw1", with(forwarding()), true},
               {"wan-host", no_dad, false}};
    t.bridges = {{"switch", "br-lan", true}, {"switch", "br-wan", true}};
    t.links = {
        {"lan-host", "eth0", "switch", "lan-host", "br-lan"}, {"fw0", "lan0", "switch", "fw0-lan", "br-lan"},
        {"fw1", "lan0", "switch", "fw1-lan", "br-lan"},       {"fw0", "wan0", "switch", "fw0-wan", "br-wan"},
        {"fw1", "wan0", "switch", "fw1-wan", "br-wan"},       {"wan-host", "eth0", "switch", "wan-host", "br-wan"},
        {"fw0", "fab0", "fw1", "fab0", ""},
    };
    t.addresses = {
        {"lan-host", "eth0", std::string(kLanHost4) + "/24"}, {"lan-host", "eth0", std::string(kLanHost6) + "/64"},
        {"fw0", "lan0", std::string(kFw0Lan4) + "/24"},       {"fw0", "lan0", std::string(kFw0Lan6) + "/64"},
        {"fw1", "lan0", std::string(kFw1Lan4) + "/24"},       {"fw1", "lan0", std::string(kFw1Lan6) + "/64"},
        {"fw0", "wan0", std::string(kFw0Wan4) + "/24"},       {"fw0", "wan0", std::string(kFw0Wan6) + "/64"},
        {"fw1", "wan0", std::string(kFw1Wan4) + "/24"},       {"fw1", "wan0", std::string(kFw1Wan6) + "/64"},
        {"fw0", "fab0", std::string(kFw0Fabric4) + "/30"},    {"fw0", "fab0", std::string(kFw0Fabric6) + "/64"},
        {"fw1", "fab0", std::string(kFw1Fabric4) + "/30"},    {"fw1", "fab0", std::string(kFw1Fabric6) + "/64"},
        {"wan-host", "eth0", std::string(kWanHost4) + "/24"}, {"wan-host", "eth0", std::string(kWanHost6) + "/64"},
    };
    // The LAN host's gateway is the active node; the WAN host reaches the LAN through it.
    t.routes = {{"lan-host", "default", kFw0Lan4},
                {"lan-host", "default", kFw0Lan6},
                {"wan-host", kLanNet4, kFw0Wan4},
                {"wan-host", kLanNet6, kFw0Wan6}};
    t.probe_from = "lan-host";
    t.probe_targets = {kWanHost4, kWanHost6};
    t.server_node = "wan-host";
    return t;
}

Topology make_cluster_ha() {
    Topology t = make_cluster();
    t.name = "cluster-ha";
    t.routes = {{"lan-host", "default", kLanVip4},
                {"lan-host", "default", kLanVip6},
                {"wan-host", kLanNet4, kWanVip4},
                {"wan-host", kLanNet6, kWanVip6}};
    t.ha_pair = true;
    // A node whose links go down and up again keeps its IPv6 addresses, as
    // IPv4 does (the failover tests take a node's links down).
    for (auto& n : t.nodes)
        if (n.firewall) n.sysctls.push_back("net.ipv6.conf.all.keep_addr_on_down=1");
    return t;
}

Topology make_bpf_test() {
    Topology t;
    t.name = "bpf-test";
    t.nodes = {{"fw", forwarding(), false}};
    t.links = {{"fw", "lan0", "fw", "lan0p", ""}, {"fw", "wan0", "fw", "wan0p", ""}};
    t.addresses = {{"fw", "lan0", std::string(kFw0Lan4) + "/24"},
                   {"fw", "lan0", std::string(kFw0Lan6) + "/64"},
                   {"fw", "wan0", std::string(kFw0Wan4) + "/24"},
                   {"fw", "wan0", std::string(kFw0Wan6) + "/64"}};
    t.neighbours = {{"fw", "lan0", kLanHost4, kLanHostMac},
                    {"fw", "lan0", kLanHost6, kLanHostMac},
                    {"fw", "wan0", kWanHost4, kWanHostMac},
                    {"fw", "wan0", kWanHost6, kWanHostMac}};
    return t;
}

Topology make_single_dmz() {
    Topology t = single_shape("single-dmz");
    // A bridge has no native XDP: what `xdp-mode: native` falls back from.
    t.bridges = {{"fw", "dmz0", true}};
    return t;
}

Status ping_from(const std::string& ns, const std::string& target) {
    std::string last;
    for (int attempt = 0; attempt < 5; ++attempt) {
        auto r = run_local({"ip", "netns", "exec", ns, "ping", "-q", "-c", "1", "-W", "2", target},
                           std::chrono::seconds(5));
        if (r && r->exit_status == 0) return {};
        last = r ? trim(r->out + r->err) : r.error().message;
    }
    return make_error(ns + " cannot reach " + target + ": " + last);
}

}  // namespace

std::vector<std::string> Topology::firewall_nodes() const {
    std::vector<std::string> out;
    for (const auto& n : nodes)
        if (n.firewall) out.push_back(n.name);
    return out;
}

std::vector<std::string> Topology::node_names() const {
    std::vector<std::string> out;
    for (const auto& n : nodes) out.push_back(n.name);
    return out;
}

const Topology& single_topology() {
    static const Topology t = single_shape("single");
    return t;
}
const Topology& cluster_topology() {
    static const Topology t = make_cluster();
    return t;
}
const Topology& cluster_ha_topology() {
    static const Topology t = make_cluster_ha();
    return t;
}
const Topology& single_dmz_topology() {
    static const Topology t = make_single_dmz();
    return t;
}
const Topology& bpf_test_topology() {
    static const Topology t = make_bpf_test();
    return t;
}

const Topology* find_topology(const std::string& name) {
    for (const Topology* t : {&cluster_topology(), &cluster_ha_topology(), &single_topology(), &single_dmz_topology(),
                              &bpf_test_topology()})
        if (t->name == name) return t;
    return nullptr;
}

std::vector<std::string> topology_names() {
    return {"cluster", "cluster-ha", "single", "single-dmz", "bpf-test"};
}

std::string namespace_name(const std::string& prefix, const std::string& node) {
    return prefix + "-" + node;
}

bool namespace_exists(const std::string& name) {
    std::error_code ec;
    return std::filesystem::exists("/run/netns/" + name, ec);
}

Status build_topology(const Topology& t, const std::string& prefix, std::ostream& log) {
    auto ns = [&](const std::string& node) { return namespace_name(prefix, node); };
    auto ip = [&](const std::string& node, std::vector<std::string> args) {
        std::vector<std::string> argv{"ip", "-n", ns(node)};
        argv.insert(argv.end(), args.begin(), args.end());
        return must(argv);
    };
    for (const auto& node : t.nodes) {
        if (auto s = must({"ip", "netns", "add", ns(node.name)}); !s) return s;
        if (auto s = ip(node.name, {"link", "set", "lo", "up"}); !s) return s;
        if (!node.sysctls.empty()) {
            std::vector<std::string> argv{"ip", "netns", "exec", ns(node.name), "sysctl", "-qw"};
            argv.insert(argv.end(), node.sysctls.begin(), node.sysctls.end());
            if (auto s = must(argv); !s) return s;
        }
    }
    for (const auto& br : t.bridges) {
        if (auto s = ip(br.node, {"link", "add", br.name, "type", "bridge"}); !s) return s;
        if (br.up)
            if (auto s = ip(br.node, {"link", "set", br.name, "up"}); !s) return s;
    }
    for (const auto& l : t.links) {
        std::vector<std::string> add{"link", "add", l.a_dev, "type", "veth", "peer", "name", l.b_dev};
        if (l.b_node != l.a_node) {
            add.push_back("netns");
            add.push_back(ns(l.b_node));
        }
        if (auto s = ip(l.a_node, add); !s) return s;
        if (!l.b_bridge.empty())
            if (auto s = ip(l.b_node, {"link", "set", l.b_dev, "master", l.b_bridge}); !s) return s;
        if (auto s = ip(l.a_node, {"link", "set", l.a_dev, "up"}); !s) return s;
        if (auto s = ip(l.b_node, {"link", "set", l.b_dev, "up"}); !s) return s;
    }
    for (const auto& a : t.addresses) {
        std::vector<std::string> args{"addr", "add", a.cidr, "dev", a.dev};
        if (is_ipv6(a.cidr)) args.push_back("nodad");
        if (auto s = ip(a.node, args); !s) return s;
    }
    for (const auto& n : t.neighbours) {
        if (auto s = ip(n.node, {"neigh", "replace", n.address, "lladdr", n.mac, "dev", n.dev, "nud", "permanent"});
            !s)
            return s;
    }
    for (const auto& r : t.routes) {
        std::vector<std::string> args;
        if (is_ipv6(r.via)) args.push_back("-6");
        for (const char* w : {"route", "add"}) args.push_back(w);
        args.push_back(r.prefix);
        args.push_back("via");
        args.push_back(r.via);
        if (auto s = ip(r.node, args); !s) return s;
    }
    // An HA pair's hosts reach nothing until sluice has elected a node.
    if (!t.ha_pair)
        if (auto s = probe_topology(t, prefix); !s) return s;
    std::string names;
    for (const auto& node : t.nodes) names += (names.empty() ? "" : ", ") + ns(node.name);
    log << "topology " << t.name << " (" << prefix << "): namespaces " << names << " are up\n";
    return {};
}

Status probe_topology(const Topology& t, const std::string& prefix) {
    for (const auto& target : t.probe_targets)
        if (auto s = ping_from(namespace_name(prefix, t.probe_from), target); !s) return s;
    return {};
}

Status remove_topology(const Topology& t, const std::string& prefix) {
    std::string problems;
    for (const auto& node : t.nodes) {
        std::string name = namespace_name(prefix, node.name);
        if (!namespace_exists(name)) continue;
        if (auto s = must({"ip", "netns", "del", name}); !s) problems += "\n  " + s.error().message;
    }
    if (!problems.empty()) return make_error("topology " + t.name + " (" + prefix + "): cannot delete" + problems);
    return {};
}

}  // namespace sluice::cluster
