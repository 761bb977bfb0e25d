#include "cluster/netns_cluster.h"

#include <unistd.h>

#include <algorithm>
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
    std::vector<std::string> argv{binary, "--netns", ns, "run", "-c", config};
    // An HA pair runs one file on both nodes; the node's name says which it is.
    const Topology* topology = find_topology(load_state(prefix).value("topology", std::string()));
    if (topology && topology->ha_pair) {
        argv.push_back("--node");
        argv.push_back(node);
    }
    auto pid = spawn_detached(argv, log_path);
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

Status start_iperf3_server(const std::string& prefix, const std::string& node, std::ostream& log) {
    NetnsExecutor exec(prefix);
    std::string log_path = cluster_state_dir(prefix) + "/iperf3-server.log";
    auto bg = exec.start(node, {"iperf3", "-s", "-p", std::to_string(kIperfPort)}, log_path);
    if (!bg)
        return make_error("starting iperf3 -s on " + namespace_name(prefix, node) + ": " + bg.error().message);
    record_process(prefix, "iperf3-server", bg->pid, "iperf3 -s -p " + std::to_string(kIperfPort), log_path);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        // Its log is block-buffered; ask the socket table instead.
        auto ss = exec.run(node, {"ss", "-Hltn", "sport", "=", ":" + std::to_string(kIperfPort)},
                           std::chrono::seconds(5));
        if (ss && ss->exit_status == 0 && !trim(ss->out).empty()) {
            log << "cluster " << prefix << ": iperf3 server on " << namespace_name(prefix, node) << " port "
                << kIperfPort << " (pid " << bg->pid << ")\n";
            return {};
        }
        if (!pid_running(bg->pid))
            return make_error("iperf3 -s on " + namespace_name(prefix, node) + " exited: " + read_file(log_path));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return make_error("iperf3 -s did not report listening within 10s; see " + log_path);
}

// The topology the state records; without one (a lab whose up was killed
// before it wrote its state), every topology: down must find whatever is there.
std::vector<const Topology*> recorded_topologies(const nlohmann::json& state) {
    if (const Topology* t = find_topology(state.value("topology", std::string()))) return {t};
    std::vector<const Topology*> all;
    for (const auto& name : topology_names()) all.push_back(find_topology(name));
    return all;
}

std::vector<std::string> nodes_of(const std::vector<const Topology*>& topologies, bool firewalls_only) {
    std::vector<std::string> out;
    for (const Topology* t : topologies)
        for (const auto& n : t->nodes)
            if ((!firewalls_only || n.firewall) && std::find(out.begin(), out.end(), n.name) == out.end())
                out.push_back(n.name);
    return out;
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

std::string cluster_state_dir(const std::string& prefix) {
    return "/run/sluice/cluster/" + prefix;
}
std::string cluster_config_path(const std::string& prefix) {
    return cluster_state_dir(prefix) + "/sluice.yaml";
}
std::string cluster_state_path(const std::string& prefix) {
    return cluster_state_dir(prefix) + "/state.json";
}

std::string default_cluster_config(bool with_fabric) {
    std::string fabric_interface = with_fabric ? "  fab0: { zone: fabric }\n" : "";
    std::string fabric_zone = with_fabric ? "  fabric: {}\n" : "";
    return R"(# The netns cluster's firewall config, the same on fw0 and fw1 (sluice cluster up).
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
)" + fabric_interface + R"(zones:
  trust: {}
  untrust: {}
)" + fabric_zone + R"(policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
)";
}

std::string ha_cluster_config(int interval_ms, int hold_ms) {
    return default_cluster_config(true) + std::string(R"(# fw0 and fw1 are an HA pair (docs/ha.md): the hosts' gateways are the
# virtual addresses, held by whichever node is active.
ha:
  fabric: fab0
  heartbeat: { interval: )") + std::to_string(interval_ms) + "ms, hold-time: " + std::to_string(hold_ms) +
           R"(ms }
  nodes:
    fw0: { id: 1, fabric-address: )" + kFw0Fabric4 + R"( }
    fw1: { id: 2, fabric-address: )" + kFw1Fabric4 + R"( }
  groups:
    gateway:
      priority: { fw0: 200, fw1: 100 }
      preempt: true
      interfaces:
        lan0: { virtual-mac: ")" + kLanVmac + R"(", addresses: [)" + kLanVip4 + R"(/24, ")" + kLanVip6 + R"(/64"] }
        wan0: { virtual-mac: ")" + kWanVmac + R"(", addresses: [)" + kWanVip4 + R"(/24, ")" + kWanVip6 + R"(/64"] }
)";
}

Status cluster_up(const NetnsClusterOptions& options, std::ostream& log) {
    const std::string& p = options.prefix;
    if (auto s = validate_prefix(p); !s) return s;
    const Topology* topology = find_topology(options.topology);
    if (!topology) {
        std::string known;
        for (const auto& n : topology_names()) known += (known.empty() ? "" : ", ") + n;
        return make_error("unknown topology '" + options.topology + "' (known: " + known + ")");
    }
    std::vector<std::string> existing;
    for (const auto& node : topology->node_names())
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
                         {"topology", topology->name},
                         {"sluice_binary", binary},
                         {"config", cluster_config_path(p)},
                         {"processes", nlohmann::json::object()}};
    nlohmann::json namespaces = nlohmann::json::array();
    for (const auto& node : topology->node_names()) namespaces.push_back(namespace_name(p, node));
    state["namespaces"] = namespaces;
    if (auto s = save_state(p, state); !s) return s;
    {
        std::ofstream out(cluster_config_path(p));
        bool fabric = std::any_of(topology->links.begin(), topology->links.end(),
                                  [](const Topology::Link& l) { return l.a_dev == "fab0"; });
        out << (topology->ha_pair ? ha_cluster_config() : default_cluster_config(fabric));
        if (!out) return make_error("cannot write " + cluster_config_path(p));
    }

    auto fail = [&](const Error& e) -> Status {
        log << "cluster " << p << ": " << e.message << "\ncluster " << p << ": removing what was built\n";
        (void)cluster_down(p, log, binary);
        return e;
    };
    if (auto s = build_topology(*topology, p, log); !s) return fail(s.error());
    if (options.start_sluice) {
        for (const auto& fw : topology->firewall_nodes())
            if (auto s = start_sluice_on(p, fw, binary, log); !s) return fail(s.error());
        // The probe again, now through sluice.
        if (auto s = probe_topology(*topology, p); !s) return fail(s.error());
    }
    if (options.start_iperf3 && !topology->server_node.empty()) {
        if (auto s = start_iperf3_server(p, topology->server_node, log); !s) return fail(s.error());
    }
    log << "cluster " << p << ": up (topology " << topology->name << "); LAN host " << kLanHost4 << " / "
        << kLanHost6 << " -> " << namespace_name(p, topology->firewall_nodes().front()) << " -> WAN host " << kWanHost4
        << " / " << kWanHost6 << "\n";
    return {};
}

Status cluster_down(const std::string& prefix, std::ostream& log, const std::string& sluice_binary) {
    if (auto s = validate_prefix(prefix); !s) return s;
    auto state = load_state(prefix);
    std::string binary = sluice_binary.empty() ? state.value("sluice_binary", std::string()) : sluice_binary;
    std::error_code ec;
    if (binary.empty() || !fs::exists(binary, ec)) binary = self_binary("");
    std::vector<std::string> problems;
    const auto topologies = recorded_topologies(state);
    const auto nodes = nodes_of(topologies, false);
    const auto firewalls = nodes_of(topologies, true);

    // 1. Processes we started, by PID.
    if (state.contains("processes") && state["processes"].is_object()) {
        for (const auto& [name, entry] : state["processes"].items()) stop_recorded(prefix, name, entry, log);
    }
    // 2. Detach and unpin sluice on the firewalls.
    for (const auto& fw : firewalls) {
        std::string ns = namespace_name(prefix, fw);
        if (!namespace_exists(ns)) continue;
        auto r = run_local({binary, "--netns", ns, "down"}, std::chrono::seconds(60));
        if (!r || r->exit_status != 0)
            log << "cluster " << prefix << ": `sluice --netns " << ns
                << " down`: " << (r ? trim(r->err + r->out) : r.error().message) << "\n";
    }
    // 3. Anything still inside our namespaces (e.g. an iperf3 client a
    //    perf-test left behind) belongs to this cluster: stop it by PID.
    for (const auto& node : nodes) {
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
    for (const auto& node : nodes) {
        std::string ns = namespace_name(prefix, node);
        if (!namespace_exists(ns)) continue;
        if (auto s = must({"ip", "netns", "del", ns}); !s) problems.push_back(s.error().message);
    }
    // 5. Pins and state sluice down could not remove (e.g. namespace gone first).
    for (const auto& fw : firewalls) {
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
    for (const auto& fw : nodes_of(recorded_topologies(state), true)) {
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
    for (const auto& fw : nodes_of(recorded_topologies(state), true)) {
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
    auto state = load_state(prefix);
    for (const auto& node : nodes_of(recorded_topologies(state), false)) {
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
