// Proof that a perf-test measurement went through what it is labelled with.
// A number labelled sluice must have been measured with sluice's XDP program
// attached on the active firewall, before and after the run, and with its
// packet counter moving at least as much as the traffic requires; a kernel
// baseline must have been measured with no sluice program attached. The
// kernel is asked (`ip -j link show` on the node), not the daemon.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "cluster/executor.h"
#include "cluster/xdp_links.h"
#include "common/result.h"

namespace sluice::perftest {

// What the active firewall looked like at one moment.
struct FirewallPath {
    std::vector<std::string> sluice_interfaces;  // interfaces running xdp_main_prog
    std::vector<std::string> other_xdp;          // "wan0: xdp_foo" (another program)
    std::optional<uint64_t> rx_packets;          // sluice's `rx` counter, when readable
    std::string stats_error;                     // why rx_packets is empty
};

// The `rx` counter of `sluice show stats --json`.
Result<uint64_t> stats_rx_packets(const std::string& stats_json);

// The fewest packets XDP can have seen for `bytes` of TCP payload: a
// generic-XDP frame (a GRO aggregate) carries at most 64 KiB.
uint64_t minimum_packets(double bytes);

// Ok, or why a measurement of `what` about to start cannot be sluice's:
// sluice is not attached, or its counters cannot be read (not running).
// Checked before traffic starts, so a doomed run is refused at once.
Status verify_sluice_attached(const FirewallPath& now, const std::string& node, const std::string& what);

// Ok, or why the measurement of `what` (e.g. "sluice IPv4, pass 1") cannot
// be sluice's: not attached before or after, or the counter moved less than
// the traffic needs.
Status verify_sluice_in_path(const FirewallPath& before, const FirewallPath& after, double bytes,
                             const std::string& node, const std::string& what);
// "in path: sluice attached on fw0 (lan0, wan0), rx +N packets (at least M
// needed)": the log line of a verified measurement.
std::string in_path_note(const FirewallPath& before, const FirewallPath& after, double bytes, const std::string& node);

// Ok, or why a baseline measurement would still include sluice.
Status verify_sluice_detached(const FirewallPath& now, const std::string& node, const std::string& what);

class PathCheck {
public:
    // Runs `sluice show stats --json` for the active firewall.
    using StatsCommand = std::function<Result<cluster::CommandResult>()>;
    PathCheck(cluster::Executor& executor, std::string node, StatsCommand stats)
        : executor_(executor), node_(std::move(node)), stats_(std::move(stats)) {}

    // For the environment: netns runs this executable with --netns on the
    // host (bpffs is not mounted under `ip netns exec`); incus runs `sluice`
    // on the node.
    static PathCheck for_environment(cluster::Executor& executor, const cluster::Environment& environment,
                                     const std::string& prefix);

    Result<FirewallPath> read();
    const std::string& node() const { return node_; }

private:
    cluster::Executor& executor_;
    std::string node_;
    StatsCommand stats_;
};

}  // namespace sluice::perftest
