#include "perftest/path_check.h"

#include <nlohmann/json.hpp>

#include "cluster/netns_cluster.h"
#include "cluster/process.h"
#include "cluster/xdp_links.h"

namespace sluice::perftest {

namespace {

constexpr double kLargestXdpFrame = 65536.0;

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out.empty() ? "none" : out;
}

std::string trim_line(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// "attached on lan0, wan0" / "not attached on any interface"
std::string describe(const FirewallPath& p) {
    std::string text = p.sluice_interfaces.empty() ? "sluice's pipeline (" + std::string(cluster::kSluiceXdpProgram) +
                                                         " at XDP or " + cluster::kSluiceTcProgram +
                                                         " at TC ingress) is attached on no interface"
                                                   : "sluice is attached on " + join(p.sluice_interfaces);
    if (!p.other_xdp.empty()) text += "; other XDP programs: " + join(p.other_xdp);
    return text;
}

}  // namespace

Result<uint64_t> stats_rx_packets(const std::string& stats_json) {
    try {
        auto j = nlohmann::json::parse(stats_json);
        const auto& counters = j.at("counters");
        return counters.at("rx").get<uint64_t>();
    } catch (const std::exception& e) {
        return make_error(std::string("`sluice show stats --json` has no rx counter: ") + e.what());
    }
}

uint64_t minimum_packets(double bytes) {
    if (bytes <= 0) return 0;
    return static_cast<uint64_t>(bytes / kLargestXdpFrame);
}

Status verify_sluice_attached(const FirewallPath& now, const std::string& node, const std::string& what) {
    const std::string head = what + " was not measured through sluice on " + node + ": ";
    if (now.sluice_interfaces.empty()) return make_error(head + "before the run, " + describe(now));
    if (!now.rx_packets) return make_error(head + "its counters cannot be read (" + now.stats_error + ")");
    return {};
}

Status verify_sluice_in_path(const FirewallPath& before, const FirewallPath& after, double bytes,
                             const std::string& node, const std::string& what) {
    const std::string head = what + " was not measured through sluice on " + node + ": ";
    if (before.sluice_interfaces.empty()) return make_error(head + "before the run, " + describe(before));
    if (after.sluice_interfaces.empty()) return make_error(head + "after the run, " + describe(after));
    if (!before.rx_packets || !after.rx_packets) {
        return make_error(head + "its counters cannot be read (" +
                          (before.rx_packets ? after.stats_error : before.stats_error) + ")");
    }
    const uint64_t seen = *after.rx_packets >= *before.rx_packets ? *after.rx_packets - *before.rx_packets : 0;
    const uint64_t needed = minimum_packets(bytes);
    if (seen < needed) {
        return make_error(head + "its rx counter moved by " + std::to_string(seen) + " packets, but " +
                          std::to_string(static_cast<uint64_t>(bytes)) + " bytes need at least " +
                          std::to_string(needed) + " (64 KiB per frame at most); " + describe(after));
    }
    return {};
}

std::string in_path_note(const FirewallPath& before, const FirewallPath& after, double bytes, const std::string& node) {
    std::string ifaces;
    for (const auto& i : after.sluice_interfaces) ifaces += (ifaces.empty() ? "" : ", ") + i;
    const uint64_t b = before.rx_packets.value_or(0), a = after.rx_packets.value_or(0);
    return "in path: sluice attached on " + node + " (" + ifaces + "), rx +" + std::to_string(a >= b ? a - b : 0) +
           " packets (at least " + std::to_string(minimum_packets(bytes)) + " needed)";
}

Status verify_sluice_detached(const FirewallPath& now, const std::string& node, const std::string& what) {
    if (now.sluice_interfaces.empty()) return {};
    return make_error(what + " would include sluice: on " + node + ", " + describe(now) +
                      " although the baseline detached it");
}

PathCheck PathCheck::for_environment(cluster::Executor& executor, const cluster::Environment& environment,
                                     const std::string& prefix) {
    if (environment.kind == cluster::EnvironmentKind::netns) {
        const std::string ns = cluster::namespace_name(prefix, environment.fw0);
        const std::string binary = cluster::self_binary("");
        return PathCheck(executor, environment.fw0, [binary, ns]() {
            return cluster::run_local({binary, "--netns", ns, "show", "stats", "--json"}, std::chrono::seconds(30));
        });
    }
    const std::string node = environment.fw0;
    return PathCheck(executor, node, [&executor, node]() {
        return executor.run(node, {"sluice", "show", "stats", "--json"}, std::chrono::seconds(30));
    });
}

Result<FirewallPath> PathCheck::read() {
    FirewallPath path;
    auto found = cluster::interfaces_with_sluice(
        [this](const std::vector<std::string>& argv) -> Result<std::string> {
            auto r = executor_.run(node_, argv, std::chrono::seconds(30));
            const std::string cmd = "`" + argv[0] + " " + argv[1] + " " + argv[2] + "` on " + node_;
            if (!r) return make_error(cmd + ": " + r.error().message);
            if (r->exit_status != 0)
                return make_error(cmd + " exited with status " + std::to_string(r->exit_status) + ": " +
                                  trim_line(r->err));
            return r->out;
        },
        &path.other_xdp);
    if (!found) return make_error(node_ + ": " + found.error().message);
    path.sluice_interfaces = std::move(found.value());
    auto stats = stats_();
    if (!stats) {
        path.stats_error = stats.error().message;
    } else if (stats->exit_status != 0) {
        path.stats_error = "`sluice show stats` exited with status " + std::to_string(stats->exit_status) + ": " +
                           trim_line(stats->err.empty() ? stats->out : stats->err);
    } else if (auto rx = stats_rx_packets(stats->out); rx) {
        path.rx_packets = rx.value();
    } else {
        path.stats_error = rx.error().message;
    }
    return path;
}

}  // namespace sluice::perftest
