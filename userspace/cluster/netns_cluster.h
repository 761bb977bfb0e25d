// The local two-node cluster, built from network namespaces (docs/design.md
// "Cluster and perf-test"):
//
//   P-lan-host eth0 ── lan-host|br-lan ──┬── lan0 P-fw0 wan0 ──┬── br-wan|wan-host ── eth0 P-wan-host
//                        (P-switch)      └── lan0 P-fw1 wan0 ──┘      (P-switch)
//                                     P-fw0 fab0 ───── fab0 P-fw1
//
// Addresses only from 198.18.0.0/15 and 2001:2::/48 (see kLan4... below).
// sluice runs on fw0 and fw1 with the same config; iperf3 -s on the WAN host.
// Everything the cluster owns is recorded in /run/sluice/cluster/P/.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::cluster {

inline constexpr const char* kDefaultPrefix = "sl";

// Addresses of the netns cluster.
inline constexpr const char* kLanHost4 = "198.18.1.10";
inline constexpr const char* kLanHost6 = "2001:2:0:1::10";
inline constexpr const char* kFw0Lan4 = "198.18.1.1";
inline constexpr const char* kFw0Lan6 = "2001:2:0:1::1";
inline constexpr const char* kFw1Lan4 = "198.18.1.2";
inline constexpr const char* kFw1Lan6 = "2001:2:0:1::2";
inline constexpr const char* kFw0Wan4 = "198.18.100.1";
inline constexpr const char* kFw0Wan6 = "2001:2:0:100::1";
inline constexpr const char* kFw1Wan4 = "198.18.100.2";
inline constexpr const char* kFw1Wan6 = "2001:2:0:100::2";
inline constexpr const char* kWanHost4 = "198.18.100.200";
inline constexpr const char* kWanHost6 = "2001:2:0:100::200";
inline constexpr const char* kFw0Fabric4 = "198.18.2.1";
inline constexpr const char* kFw1Fabric4 = "198.18.2.2";
inline constexpr const char* kFw0Fabric6 = "2001:2:0:2::1";
inline constexpr const char* kFw1Fabric6 = "2001:2:0:2::2";
inline constexpr int kIperfPort = 5201;

// Node roles; the namespace of node N is "P-N".
inline const std::vector<std::string>& cluster_nodes() {
    static const std::vector<std::string> nodes{"lan-host", "fw0", "fw1", "wan-host"};
    return nodes;
}
inline constexpr const char* kSwitchNode = "switch";

struct NetnsClusterOptions {
    std::string prefix = kDefaultPrefix;
    std::string sluice_binary;  // "" = this executable (/proc/self/exe)
    bool start_sluice = true;   // sluice run on fw0 and fw1
    bool start_iperf3 = true;   // iperf3 -s on the WAN host
};

// A prefix is 1-12 characters [a-z0-9-], starting with a letter or digit.
Status validate_prefix(const std::string& prefix);

std::string namespace_name(const std::string& prefix, const std::string& node);  // "P-fw0"
std::string self_binary(const std::string& given);  // given, or this executable (/proc/self/exe)
std::string cluster_state_dir(const std::string& prefix);                        // /run/sluice/cluster/P
std::string cluster_config_path(const std::string& prefix);                      // .../sluice.yaml
std::string cluster_state_path(const std::string& prefix);                       // .../state.json

// The sluice config both firewalls run (lan0 trust, wan0 untrust, fab0 fabric;
// trust -> untrust permit; untrust -> trust deny).
std::string default_cluster_config();

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
