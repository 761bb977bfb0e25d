#include "bench/lab.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster/netns_cluster.h"
#include "cluster/process.h"

namespace sluice::bench {
namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<std::unique_ptr<Lab>> Lab::create(const std::string& topology, const std::string& prefix, std::ostream& log) {
    std::unique_ptr<Lab> lab(new Lab());
    lab->prefix_ = prefix;
    lab->exec_ = cluster::NetnsExecutor(prefix);
    lab->sluice_ = cluster::self_binary("");
    std::string pattern = "/tmp/sluice-bench-" + prefix + ".XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return errno_error("mkdtemp " + pattern, errno);
    lab->tmp_ = buf.data();

    cluster::NetnsClusterOptions o;
    o.prefix = prefix;
    o.topology = topology;
    o.start_sluice = false;
    o.start_iperf3 = false;
    o.sluice_binary = lab->sluice_;
    std::ostringstream quiet;
    if (auto s = cluster::cluster_up(o, quiet); !s) {
        // cluster_up removed what it had built; an existing lab of that
        // prefix (another run's) is left alone.
        return with_context("building the " + topology + " lab", s.error());
    }
    lab->built_ = true;
    log << "bench: lab " << topology << " up (namespaces " << prefix << "-*)\n";
    return lab;
}

Lab::~Lab() {
    for (auto it = started_.rbegin(); it != started_.rend(); ++it) (void)exec_.stop(*it, std::chrono::seconds(5));
    if (built_) {
        std::ostringstream quiet;
        (void)cluster::cluster_down(prefix_, quiet, sluice_);
    }
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
}

std::string Lab::ns(const std::string& node) const {
    return exec_.namespace_of(node);
}

Result<cluster::CommandResult> Lab::run(const std::string& node, const std::vector<std::string>& argv,
                                        std::chrono::seconds timeout) {
    if (node.empty()) return cluster::run_local(argv, timeout);
    return exec_.run(node, argv, timeout);
}

Result<std::string> Lab::output(const std::string& node, const std::vector<std::string>& argv,
                                std::chrono::seconds timeout) {
    auto r = run(node, argv, timeout);
    if (!r) return r.error();
    if (r->exit_status != 0 || r->timed_out) {
        std::string where = node.empty() ? "" : " in " + ns(node);
        std::string text = r->err.empty() ? r->out : r->err;
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
        return make_error("`" + cluster::shell_join(argv) + "`" + where + " failed" +
                          (r->timed_out ? " (timed out)" : " (exit " + std::to_string(r->exit_status) + ")") +
                          (text.empty() ? "" : ": " + text));
    }
    return r->out;
}

Status Lab::must(const std::string& node, const std::vector<std::string>& argv, std::chrono::seconds timeout) {
    auto r = output(node, argv, timeout);
    if (!r) return r.error();
    return {};
}

Result<cluster::BackgroundProcess> Lab::start(const std::string& node, const std::vector<std::string>& argv,
                                              const std::string& log_name, int cpu) {
    std::vector<std::string> full;
    if (cpu >= 0) full = {"taskset", "-c", std::to_string(cpu)};
    full.insert(full.end(), argv.begin(), argv.end());
    std::string log_path = tmp_ + "/" + log_name + ".log";
    cluster::BackgroundProcess process{.node = node, .pid = 0, .log_path = log_path};
    if (node.empty()) {
        auto pid = cluster::spawn_detached(full, log_path);
        if (!pid) return pid.error();
        process.pid = *pid;
    } else {
        auto p = exec_.start(node, full, log_path);
        if (!p) return p.error();
        process = *p;
    }
    started_.push_back(process);
    return process;
}

Status Lab::stop(const cluster::BackgroundProcess& process, std::chrono::seconds grace) {
    auto s = exec_.stop(process, grace);
    started_.erase(std::remove_if(started_.begin(), started_.end(),
                                  [&](const cluster::BackgroundProcess& p) { return p.pid == process.pid; }),
                   started_.end());
    return s;
}

bool Lab::running(const cluster::BackgroundProcess& process) const {
    return cluster::pid_running(process.pid);
}

Result<std::string> Lab::write_file(const std::string& name, const std::string& text) const {
    std::string path = tmp_ + "/" + name;
    std::ofstream out(path);
    out << text;
    if (!out) return make_error("cannot write " + path);
    return path;
}

std::string lab_zones_config(const std::string& xdp_mode) {
    const std::string mode = xdp_mode.empty() ? "" : ", xdp-mode: " + xdp_mode;
    return "interfaces:\n  lan0: { zone: trust" + mode + " }\n  wan0: { zone: untrust" + mode + " }\n" + R"(zones:
  trust: {}
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
)";
}

}  // namespace sluice::bench
