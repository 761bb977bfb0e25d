#include "cluster/netns_cluster.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster/netns_executor.h"
#include "cluster/process.h"

namespace sluice::cluster {
namespace fs = std::filesystem;
namespace {

constexpr auto kIpTimeout = std::chrono::seconds(30);
constexpr auto kStopGrace = std::chrono::seconds(5);

std::vector<std::string> all_nodes() {
    std::vector<std::string> nodes{kSwitchNode};
    for (const auto& n : cluster_nodes()) nodes.push_back(n);
    return nodes;
}

bool namespace_exists(const std::string& name) {
    std::error_code ec;
    return fs::exists("/run/netns/" + name, ec);
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
}

// Runs a command on this machine; an Error carrying its stderr if it fails.
Status must(const std::vector<std::string>& argv, std::chrono::seconds timeout = kIpTimeout) {
    auto r = run_local(argv, timeout);
    if (!r) return r.error();
    if (r->exit_status != 0 || r->timed_out)
        return make_error("`" + shell_join(argv) + "` failed" + (r->timed_out ? " (timed out)" : "") + ": " +
                          trim(r->err.empty() ? r->out : r->err));
    return {};
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// /proc/PID/cmdline with NULs as spaces: to check a recorded PID is still the
// process we started before signalling it (PIDs get reused).
std::string cmdline(int pid) {
    std::string s = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : s)
        if (c == '\0') c = ' ';
    return s;
}

nlohmann::json load_state(const std::string& prefix) {
    std::ifstream in(cluster_state_path(prefix));
    if (!in) return nlohmann::json::object();
    try {
        return nlohmann::json::parse(in);
    } catch (...) {
        return nlohmann::json::object();
    }
}

Status save_state(const std::string& prefix, const nlohmann::json& state) {
    std::string path = cluster_state_path(prefix);
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        if (!out) return make_error("cannot write " + tmp);
        out << state.dump(2) << "\n";
        if (!out) return make_error("cannot write " + tmp);
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) return make_error("cannot write " + path + ": " + ec.message());
    return {};
}

void record_process(const std::string& prefix, const std::string& name, int pid, const std::string& match,
                    const std::string& log) {
    auto state = load_state(prefix);
    state["processes"][name] = {{"pid", pid}, {"match", match}, {"log", log}};
    (void)save_state(prefix, state);
}

void forget_process(const std::string& prefix, const std::string& name) {
    auto state = load_state(prefix);
    if (state.contains("processes")) state["processes"].erase(name);
    (void)save_state(prefix, state);
}

bool process_matches(int pid, const std::string& match) {
    return pid_running(pid) && cmdline(pid).find(match) != std::string::npos;
}

// Stops one recorded process by PID, if it is still the one we started.
void stop_recorded(const std::string& prefix, const std::string& name, const nlohmann::json& entry, std::ostream& log) {
    int pid = entry.value("pid", 0);
    std::string match = entry.value("match", "");
    if (pid <= 0) return;
    if (!pid_running(pid)) return;
    if (!match.empty() && !process_matches(pid, match)) {
        log << "cluster " << prefix << ": pid " << pid << " (" << name << ") is now another process; not touching it\n";
        return;
    }
    log << "cluster " << prefix << ": stopping " << name << " (pid " << pid << ")\n";
    if (auto s = stop_local_pid(pid, kStopGrace); !s) log << "cluster " << prefix << ": " << s.error().message << "\n";
}

std::string sluice_process_name(const std::string& node) {
    return "sluice-" + node;
}

Status start_sluice_on(const std::string& prefix, const std::string& node, const std::string& binary,
                       std::ostream& log) {
    std::string ns = namespace_name(prefix, node);
    std::string log_path = cluster_state_dir(prefix) + "/" + sluice_process_name(node) + ".log";
    std::string config = cluster_config_path(prefix);
    auto pid = spawn_detached({binary, "--netns", ns, "run", "-c", config}, log_path);
    if (!pid) return make_error("starting sluice on " + ns + ": " + pid.error().message);
    // The match string: the namespace and the config path are both on its command line.
    record_process(prefix, sluice_process_name(node), *pid, "--netns " + ns + " run -c " + config, log_path);
    std::string ready = "running (pid " + std::to_string(*pid) + ")";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::string text = read_file(log_path);
        if (text.find(ready) != std::string::npos) {
            log << "cluster " << prefix << ": sluice running on " << ns << " (pid " << *pid << ", log " << log_path
                << ")\n";
            return {};
        }
        if (!pid_running(*pid))
            return make_error("sluice on " + ns + " exited before it was running; its log (" + log_path + "):\n" +
                              text);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return make_error("sluice on " + ns + " did not report running within 60s; see " + log_path);
}

Status start_iperf3_server(const std::string& prefix, std::ostream& log) {
    NetnsExecutor exec(prefix);
    std::string log_path = cluster_state_dir(prefix) + "/iperf3-server.log";
    auto bg = exec.start("wan-host", {"iperf3", "-s", "-p", std::to_string(kIperfPort)}, log_path);
    if (!bg)
        return make_error("starting iperf3 -s on " + namespace_name(prefix, "wan-host") + ": " + bg.error().message);
    record_process(prefix, "iperf3-server", bg->pid, "iperf3 -s -p " + std::to_string(kIperfPort), log_path);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        // Its log is block-buffered; ask the socket table instead.
        auto ss = exec.run("wan-host", {"ss", "-Hltn", "sport", "=", ":" + std::to_string(kIperfPort)},
                           std::chrono::seconds(5));
        if (ss && ss->exit_status == 0 && !trim(ss->out).empty()) {
            log << "cluster " << prefix << ": iperf3 server on " << namespace_name(prefix, "wan-host") << " port "
                << kIperfPort << " (pid " << bg->pid << ")\n";
            return {};
        }
        if (!pid_running(bg->pid))
            return make_error("iperf3 -s on " + namespace_name(prefix, "wan-host") + " exited: " + read_file(log_path));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return make_error("iperf3 -s did not report listening within 10s; see " + log_path);
}

// The topology, one `ip` command at a time.
Status build_topology(const std::string& p, std::ostream& log) {
    auto ns = [&](const std::string& node) { return namespace_name(p, node); };
    std::string sw = ns(kSwitchNode);
    auto in = [&](const std::string& node, std::vector<std::string> args) {
        std::vector<std::string> argv{"ip", "-n", ns(node)};
        argv.insert(argv.end(), args.begin(), args.end());
        return must(argv);
    };
    auto sysctl = [&](const std::string& node, const std::vector<std::string>& settings) {
        std::vector<std::string> argv{"ip", "netns", "exec", ns(node), "sysctl", "-qw"};
        argv.insert(argv.end(), settings.begin(), settings.end());
        return must(argv);
    };

    for (const auto& node : all_nodes()) {
        if (auto s = must({"ip", "netns", "add", ns(node)}); !s) return s;
        if (auto s = in(node, {"link", "set", "lo", "up"}); !s) return s;
        // No DAD: addresses are usable at once (the topology is ours alone).
        if (auto s = sysctl(node, {"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"}); !s)
            return s;
    }
    // The switch carries frames only: no IPv6 of its own (no link-local chatter).
    if (auto s = sysctl(kSwitchNode, {"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"}); !s)
        return s;
    for (const char* br : {"br-lan", "br-wan"}) {
        if (auto s = in(kSwitchNode, {"link", "add", br, "type", "bridge"}); !s) return s;
        if (auto s = in(kSwitchNode, {"link", "set", br, "up"}); !s) return s;
    }
    // Each veth is created inside its two namespaces with its final names, so
    // nothing ever appears in the root namespace and names never collide.
    struct Port {
        std::string node, dev, switch_port, bridge;
    };
    const std::vector<Port> ports{
        {"lan-host", "eth0", "lan-host", "br-lan"}, {"fw0", "lan0", "fw0-lan", "br-lan"},
        {"fw1", "lan0", "fw1-lan", "br-lan"},       {"fw0", "wan0", "fw0-wan", "br-wan"},
        {"fw1", "wan0", "fw1-wan", "br-wan"},       {"wan-host", "eth0", "wan-host", "br-wan"},
    };
    for (const auto& port : ports) {
        if (auto s = in(kSwitchNode, {"link", "add", port.switch_port, "type", "veth", "peer", "name", port.dev,
                                      "netns", ns(port.node)});
            !s)
            return s;
        if (auto s = in(kSwitchNode, {"link", "set", port.switch_port, "master", port.bridge, "up"}); !s) return s;
    }
    if (auto s = in("fw0", {"link", "add", "fab0", "type", "veth", "peer", "name", "fab0", "netns", ns("fw1")}); !s)
        return s;

    struct Addr {
        std::string node, dev, addr;
    };
    const std::vector<Addr> addrs{
        {"lan-host", "eth0", std::string(kLanHost4) + "/24"}, {"lan-host", "eth0", std::string(kLanHost6) + "/64"},
        {"fw0", "lan0", std::string(kFw0Lan4) + "/24"},       {"fw0", "lan0", std::string(kFw0Lan6) + "/64"},
        {"fw1", "lan0", std::string(kFw1Lan4) + "/24"},       {"fw1", "lan0", std::string(kFw1Lan6) + "/64"},
        {"fw0", "wan0", std::string(kFw0Wan4) + "/24"},       {"fw0", "wan0", std::string(kFw0Wan6) + "/64"},
        {"fw1", "wan0", std::string(kFw1Wan4) + "/24"},       {"fw1", "wan0", std::string(kFw1Wan6) + "/64"},
        {"fw0", "fab0", std::string(kFw0Fabric4) + "/30"},    {"fw0", "fab0", std::string(kFw0Fabric6) + "/64"},
        {"fw1", "fab0", std::string(kFw1Fabric4) + "/30"},    {"fw1", "fab0", std::string(kFw1Fabric6) + "/64"},
        {"wan-host", "eth0", std::string(kWanHost4) + "/24"}, {"wan-host", "eth0", std::string(kWanHost6) + "/64"},
    };
    for (const auto& a : addrs) {
        std::vector<std::string> args{"addr", "add", a.addr, "dev", a.dev};
        if (a.addr.find(':') != std::string::npos) args.push_back("nodad");
        if (auto s = in(a.node, args); !s) return s;
    }
    for (const auto& [node, dev] : std::vector<std::pair<std::string, std::string>>{{"lan-host", "eth0"},
                                                                                    {"fw0", "lan0"},
                                                                                    {"fw0", "wan0"},
                                                                                    {"fw0", "fab0"},
                                                                                    {"fw1", "lan0"},
                                                                                    {"fw1", "wan0"},
                                                                                    {"fw1", "fab0"},
                                                                                    {"wan-host", "eth0"}}) {
        if (auto s = in(node, {"link", "set", dev, "up"}); !s) return s;
    }
    for (const char* fw : {"fw0", "fw1"}) {
        if (auto s = sysctl(fw, {"net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"}); !s) return s;
    }
    // The LAN host's gateway is the active node; the WAN host reaches the LAN through it.
    if (auto s = in("lan-host", {"route", "add", "default", "via", kFw0Lan4}); !s) return s;
    if (auto s = in("lan-host", {"-6", "route", "add", "default", "via", kFw0Lan6}); !s) return s;
    if (auto s = in("wan-host", {"route", "add", "198.18.1.0/24", "via", kFw0Wan4}); !s) return s;
    if (auto s = in("wan-host", {"-6", "route", "add", "2001:2:0:1::/64", "via", kFw0Wan6}); !s) return s;
    log << "cluster " << p << ": namespaces " << ns("lan-host") << ", " << ns("fw0") << ", " << ns("fw1") << ", "
        << ns("wan-host") << " and " << sw << " (br-lan, br-wan) are up\n";
    return {};
}

// The LAN host reaches the WAN host through fw0, IPv4 and IPv6.
Status check_forwarding(const std::string& prefix) {
    NetnsExecutor exec(prefix);
    for (const char* target : {kWanHost4, kWanHost6}) {
        bool ok = false;
        std::string last;
        for (int attempt = 0; attempt < 5 && !ok; ++attempt) {
            auto r = exec.run("lan-host", {"ping", "-q", "-c", "1", "-W", "2", target}, std::chrono::seconds(5));
            ok = r && r->exit_status == 0;
            if (r) last = trim(r->out + r->err);
        }
        if (!ok) return make_error(std::string("the LAN host cannot reach ") + target + " through fw0: " + last);
    }
    return {};
}

}  // namespace

std::string self_binary(const std::string& given) {
    if (!given.empty()) return given;
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? "sluice" : p.string();
}


Status validate_prefix(const std::string& prefix) {
    if (prefix.empty() || prefix.size() > 12) return make_error("prefix '" + prefix + "' must be 1-12 characters long");
    for (char c : prefix) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return make_error("prefix '" + prefix + "' may only hold a-z, 0-9 and '-'");
    }
    if (prefix.front() == '-') return make_error("prefix '" + prefix + "' must start with a letter or digit");
    return {};
}

std::string namespace_name(const std::string& prefix, const std::string& node) {
    return prefix + "-" + node;
}
std::string cluster_state_dir(const std::string& prefix) {
    return "/run/sluice/cluster/" + prefix;
}
std::string cluster_config_path(const std::string& prefix) {
    return cluster_state_dir(prefix) + "/sluice.yaml";
}
std::string cluster_state_path(const std::string& prefix) {
    return cluster_state_dir(prefix) + "/state.json";
}

std::string default_cluster_config() {
    return R"(# The netns cluster's firewall config, the same on fw0 and fw1 (sluice cluster up).
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
  fab0: { zone: fabric }
zones:
  trust: {}
  untrust: {}
  fabric: {}
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
)";
}

Status cluster_up(const NetnsClusterOptions& options, std::ostream& log) {
    const std::string& p = options.prefix;
    if (auto s = validate_prefix(p); !s) return s;
    std::vector<std::string> existing;
    for (const auto& node : all_nodes())
        if (namespace_exists(namespace_name(p, node))) existing.push_back(namespace_name(p, node));
    std::error_code ec;
    if (!existing.empty() || fs::exists(cluster_state_dir(p), ec)) {
        std::string what = existing.empty() ? cluster_state_dir(p) : existing.front();
        return make_error("cluster " + p + " exists already (" + what + "); run `sluice cluster down --prefix " + p +
                          "` first");
    }
    std::string binary = self_binary(options.sluice_binary);
    fs::create_directories(cluster_state_dir(p), ec);
    if (ec) return make_error("cannot create " + cluster_state_dir(p) + ": " + ec.message());
    nlohmann::json state{{"prefix", p},
                         {"sluice_binary", binary},
                         {"config", cluster_config_path(p)},
                         {"processes", nlohmann::json::object()}};
    nlohmann::json namespaces = nlohmann::json::array();
    for (const auto& node : all_nodes()) namespaces.push_back(namespace_name(p, node));
    state["namespaces"] = namespaces;
    if (auto s = save_state(p, state); !s) return s;
    {
        std::ofstream out(cluster_config_path(p));
        out << default_cluster_config();
        if (!out) return make_error("cannot write " + cluster_config_path(p));
    }

    auto fail = [&](const Error& e) -> Status {
        log << "cluster " << p << ": " << e.message << "\ncluster " << p << ": removing what was built\n";
        (void)cluster_down(p, log, binary);
        return e;
    };
    if (auto s = build_topology(p, log); !s) return fail(s.error());
    if (options.start_sluice) {
        for (const char* fw : {"fw0", "fw1"})
            if (auto s = start_sluice_on(p, fw, binary, log); !s) return fail(s.error());
    }
    if (options.start_iperf3) {
        if (auto s = start_iperf3_server(p, log); !s) return fail(s.error());
    }
    if (auto s = check_forwarding(p); !s) return fail(s.error());
    log << "cluster " << p << ": up; LAN host " << kLanHost4 << " / " << kLanHost6 << " -> fw0 -> WAN host "
        << kWanHost4 << " / " << kWanHost6 << "\n";
    return {};
}

Status cluster_down(const std::string& prefix, std::ostream& log, const std::string& sluice_binary) {
    if (auto s = validate_prefix(prefix); !s) return s;
    auto state = load_state(prefix);
    std::string binary = sluice_binary.empty() ? state.value("sluice_binary", std::string()) : sluice_binary;
    std::error_code ec;
    if (binary.empty() || !fs::exists(binary, ec)) binary = self_binary("");
    std::vector<std::string> problems;

    // 1. Processes we started, by PID.
    if (state.contains("processes") && state["processes"].is_object()) {
        for (const auto& [name, entry] : state["processes"].items()) stop_recorded(prefix, name, entry, log);
    }
    // 2. Detach and unpin sluice on the firewalls.
    for (const char* fw : {"fw0", "fw1"}) {
        std::string ns = namespace_name(prefix, fw);
        if (!namespace_exists(ns)) continue;
        auto r = run_local({binary, "--netns", ns, "down"}, std::chrono::seconds(60));
        if (!r || r->exit_status != 0)
            log << "cluster " << prefix << ": `sluice --netns " << ns
                << " down`: " << (r ? trim(r->err + r->out) : r.error().message) << "\n";
    }
    // 3. Anything still inside our namespaces (e.g. an iperf3 client a
    //    perf-test left behind) belongs to this cluster: stop it by PID.
    for (const auto& node : all_nodes()) {
        std::string ns = namespace_name(prefix, node);
        if (!namespace_exists(ns)) continue;
        auto r = run_local({"ip", "netns", "pids", ns}, kIpTimeout);
        if (!r) continue;
        std::istringstream pids(r->out);
        int pid = 0;
        while (pids >> pid) {
            if (pid == getpid() || !pid_running(pid)) continue;
            log << "cluster " << prefix << ": stopping pid " << pid << " (" << trim(cmdline(pid)) << ") left in " << ns
                << "\n";
            if (auto s = stop_local_pid(pid, kStopGrace); !s) problems.push_back(s.error().message);
        }
    }
    // 4. The namespaces; their links go with them.
    for (const auto& node : all_nodes()) {
        std::string ns = namespace_name(prefix, node);
        if (!namespace_exists(ns)) continue;
        if (auto s = must({"ip", "netns", "del", ns}); !s) problems.push_back(s.error().message);
    }
    // 5. Pins and state sluice down could not remove (e.g. namespace gone first).
    for (const char* fw : {"fw0", "fw1"}) {
        std::string ns = namespace_name(prefix, fw);
        for (const std::string& dir : {"/sys/fs/bpf/sluice/netns/" + ns, "/run/sluice/netns/" + ns}) {
            if (fs::exists(dir, ec)) {
                fs::remove_all(dir, ec);
                if (ec) problems.push_back("cannot remove " + dir + ": " + ec.message());
            }
        }
    }
    std::string dir = cluster_state_dir(prefix);
    if (fs::exists(dir, ec)) {
        fs::remove_all(dir, ec);
        if (ec) problems.push_back("cannot remove " + dir + ": " + ec.message());
    }
    if (!problems.empty()) {
        std::string all;
        for (const auto& pr : problems) all += "\n  " + pr;
        return make_error("cluster " + prefix + ": down left something behind:" + all);
    }
    log << "cluster " << prefix << ": down\n";
    return {};
}

Status stop_firewalls(const std::string& prefix, std::ostream& log, const std::string& sluice_binary) {
    if (auto s = validate_prefix(prefix); !s) return s;
    auto state = load_state(prefix);
    std::string binary = sluice_binary.empty() ? state.value("sluice_binary", self_binary("")) : sluice_binary;
    for (const char* fw : {"fw0", "fw1"}) {
        std::string name = sluice_process_name(fw);
        if (state.contains("processes") && state["processes"].contains(name))
            stop_recorded(prefix, name, state["processes"][name], log);
        forget_process(prefix, name);
        std::string ns = namespace_name(prefix, fw);
        if (!namespace_exists(ns)) return make_error("cluster " + prefix + " has no namespace " + ns);
        if (auto s = must({binary, "--netns", ns, "down"}, std::chrono::seconds(60)); !s) return s;
    }
    return {};
}

Status start_firewalls(const std::string& prefix, std::ostream& log, const std::string& sluice_binary) {
    if (auto s = validate_prefix(prefix); !s) return s;
    auto state = load_state(prefix);
    if (state.empty()) return make_error("cluster " + prefix + " is not up (no " + cluster_state_path(prefix) + ")");
    std::string binary = sluice_binary.empty() ? state.value("sluice_binary", self_binary("")) : sluice_binary;
    for (const char* fw : {"fw0", "fw1"}) {
        std::string name = sluice_process_name(fw);
        if (state.contains("processes") && state["processes"].contains(name)) {
            const auto& entry = state["processes"][name];
            if (process_matches(entry.value("pid", 0), entry.value("match", ""))) continue;  // already running
        }
        if (auto s = start_sluice_on(prefix, fw, binary, log); !s) return s;
    }
    return {};
}

bool ClusterStatus::healthy() const {
    if (namespaces.empty() || processes.empty()) return false;
    for (const auto& n : namespaces)
        if (!n.present) return false;
    for (const auto& p : processes)
        if (!p.alive) return false;
    return true;
}

nlohmann::json ClusterStatus::to_json() const {
    nlohmann::json j{{"prefix", prefix}, {"exists", exists}, {"healthy", healthy()}};
    j["namespaces"] = nlohmann::json::array();
    for (const auto& n : namespaces)
        j["namespaces"].push_back({{"node", n.node}, {"name", n.name}, {"present", n.present}, {"links", n.links}});
    j["processes"] = nlohmann::json::array();
    for (const auto& p : processes)
        j["processes"].push_back({{"name", p.name}, {"pid", p.pid}, {"alive", p.alive}, {"log", p.log}});
    return j;
}

void ClusterStatus::print(std::ostream& out) const {
    if (!exists) {
        out << "cluster " << prefix << ": not up\n";
        return;
    }
    out << "cluster " << prefix << ": " << (healthy() ? "up" : "DEGRADED") << "\n";
    for (const auto& n : namespaces) {
        out << "  " << n.name << (n.present ? "" : "  (missing)") << "\n";
        for (const auto& l : n.links) out << "      " << l << "\n";
    }
    for (const auto& p : processes)
        out << "  " << p.name << ": pid " << p.pid << (p.alive ? " running" : " NOT running") << "  (" << p.log
            << ")\n";
}

ClusterStatus cluster_status(const std::string& prefix) {
    ClusterStatus st;
    st.prefix = prefix;
    if (!validate_prefix(prefix)) return st;
    std::error_code ec;
    st.exists = fs::exists(cluster_state_dir(prefix), ec);
    for (const auto& node : all_nodes()) {
        ClusterStatus::Namespace n;
        n.node = node;
        n.name = namespace_name(prefix, node);
        n.present = namespace_exists(n.name);
        st.exists = st.exists || n.present;
        if (n.present) {
            auto r = run_local({"ip", "-n", n.name, "-br", "addr", "show"}, kIpTimeout);
            if (r) {
                std::istringstream lines(r->out);
                std::string line;
                while (std::getline(lines, line)) {
                    std::istringstream words(line);
                    std::string word, joined;
                    while (words >> word) {
                        if (word.rfind("fe80:", 0) == 0) continue;  // link-local: noise here
                        joined += (joined.empty() ? "" : " ") + word;
                    }
                    if (!joined.empty() && joined.rfind("lo ", 0) != 0) n.links.push_back(joined);
                }
            }
        }
        st.namespaces.push_back(std::move(n));
    }
    auto state = load_state(prefix);
    if (state.contains("processes") && state["processes"].is_object()) {
        for (const auto& [name, entry] : state["processes"].items()) {
            ClusterStatus::Process p;
            p.name = name;
            p.pid = entry.value("pid", 0);
            p.log = entry.value("log", "");
            p.alive = process_matches(p.pid, entry.value("match", ""));
            st.processes.push_back(std::move(p));
        }
    }
    return st;
}

}  // namespace sluice::cluster
