// A lab topology in network namespaces (cluster/topology.h), with what runs on
// it (docs/design.md "Cluster and perf-test"): by default the two-node
// cluster, sluice on fw0 and fw1 with the same config and iperf3 -s on the
// WAN host; `--topology single --bare` is the single-firewall lab the
// integration tests and benchmarks build, with nothing started.
// Everything the lab owns is recorded in /run/sluice/cluster/P/.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cluster/topology.h"
#include "common/result.h"

namespace sluice::cluster {

inline constexpr const char* kDefaultPrefix = "sl";
inline constexpr int kIperfPort = 5201;

struct NetnsClusterOptions {
    std::string prefix = kDefaultPrefix;
    std::string topology = "cluster";  // a name from cluster/topology.h
    std::string sluice_binary;  // "" = this executable (/proc/self/exe)
    bool start_sluice = true;   // sluice run on every firewall node
    bool start_iperf3 = true;   // iperf3 -s on the topology's server node
};

// A prefix is 1-12 characters [a-z0-9-], starting with a letter or digit.
Status validate_prefix(const std::string& prefix);

std::string self_binary(const std::string& given);  // given, or this executable (/proc/self/exe)
std::string cluster_state_dir(const std::string& prefix);                        // /run/sluice/cluster/P
std::string cluster_config_path(const std::string& prefix);                      // .../sluice.yaml
std::string cluster_state_path(const std::string& prefix);                       // .../state.json

// The sluice config both firewalls run (lan0 trust, wan0 untrust, fab0 fabric
// when the topology has a fabric; trust -> untrust permit; untrust -> trust deny).
std::string default_cluster_config(bool with_fabric = true);
// The same, with the ha: section that makes fw0 and fw1 a pair (cluster-ha).
// Heartbeats every interval_ms, the peer lost after hold_ms of silence.
std::string ha_cluster_config(int interval_ms = 20, int hold_ms = 100);

// Builds the cluster. Fails (changing nothing) if any of its namespaces or its
// state dir exists already: run `sluice cluster down --prefix P` first. On a
// failure half-way, what was built is removed again.
Status cluster_up(const NetnsClusterOptions& options, std::ostream& log);

// Stops every process the cluster started (by PID: SIGTERM, then SIGKILL),
// anything else still inside its namespaces, runs `sluice --netns P-fwN down`,
// deletes the namespaces (and with them every link) and the state dir.
// Succeeds on a half-built or absent cluster.
Status cluster_down(const std::string& prefix, std::ostream& log, const std::string& sluice_binary = "");

// Stops / (re)starts sluice on fw0 and fw1 only, keeping the topology: for
// measuring plain kernel forwarding (perf-test --baseline kernel) and back.
// stop_firewalls also runs `sluice --netns P-fwN down` so nothing stays attached.
Status stop_firewalls(const std::string& prefix, std::ostream& log, const std::string& sluice_binary = "");
Status start_firewalls(const std::string& prefix, std::ostream& log, const std::string& sluice_binary = "");

struct ClusterStatus {
    std::string prefix;
    bool exists = false;  // any namespace or state
    struct Namespace {
        std::string node, name;
        bool present = false;
        std::vector<std::string> links;  // "lan0 UP 198.18.1.1/24 2001:2:0:1::1/64"
    };
    std::vector<Namespace> namespaces;
    struct Process {
        std::string name;  // "sluice-fw0", "sluice-fw1", "iperf3-server"
        int pid = 0;
        bool alive = false;
        std::string log;
    };
    std::vector<Process> processes;
    bool healthy() const;  // every namespace present, every process alive
    nlohmann::json to_json() const;
    void print(std::ostream& out) const;
};

ClusterStatus cluster_status(const std::string& prefix);

}  // namespace sluice::cluster
