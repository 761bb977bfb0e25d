// Test environments (cluster/environments.yaml): where the two-node cluster
// lives, its node names per role, iperf3 targets and parameters, and the
// expected baselines. Never hard-coded: everything comes from the file.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/executor.h"
#include "cluster/incus_cli.h"
#include "common/result.h"

namespace sluice::cluster {

enum class EnvironmentKind { incus, netns };
std::string to_string(EnvironmentKind kind);

// iperf3 client parameters: -P streams -t seconds; timeout 0 = none (a
// generous default is up to the caller).
struct IperfParams {
    int streams = 4;
    int seconds = 10;
    int timeout_seconds = 0;
};

// An expected throughput range in Gbit/s: "22+" (min only), "8-9", or not
// applicable (no target of that family).
struct GbpsRange {
    bool applicable = true;
    std::optional<double> min_gbps;
    std::optional<double> max_gbps;
    std::string describe() const;  // "22+ Gbps", "8-9 Gbps", "N/A"
};

struct Baseline {
    GbpsRange ipv4;
    GbpsRange ipv6;
    std::string nic;       // "mlx5 ConnectX-5 25G", "veth"
    std::string xdp_mode;  // "native", "generic", "tc"
    std::string notes;     // how it was measured
};

struct Environment {
    std::string name;  // "loss-cluster", "local-cluster", "standalone", "netns"
    EnvironmentKind kind = EnvironmentKind::netns;
    std::string description;
    std::string remote;  // incus remote without ':' ("loss"), "" = local

    // Node names per role (instance names for incus, node names for netns --
    // with a prefix P node "fw0" is namespace "P-fw0").
    std::string lan_host;  // "" (standalone): traffic starts on fw0 itself
    std::string fw0;       // the active firewall
    std::string fw1;       // "" when there is no second node
    std::string wan_host;  // "" when the target is not ours to run

    // incus: what `sluice cluster up` creates. Instance type per role
    // ("vm" or "container"; firewall containers are privileged, so sluice
    // can mount bpffs and attach XDP) and the image every instance starts
    // from (scripts/incus-image.sh builds "sluice/node" offline).
    std::string fw_instance_type = "vm";
    std::string host_instance_type = "container";
    std::string image = "images:debian/12/cloud";
    // The lab's bridges are <network-prefix>-lan, -wan, -fab; the prefix
    // starts with "sluice" (scripts/incus-setup.sh's guard matches sluice-*),
    // so two clusters on one daemon can each have their own.
    std::string network_prefix = "sluice";

    std::string ipv4_target;
    std::string ipv6_target;  // "" = no IPv6 target
    IperfParams normal;       // -P 4 -t 10
    IperfParams quick;        // -P 1 -t 3, timeout 8
    Baseline baseline;

    // The node iperf3 clients run on: lan_host, or fw0 when there is none.
    const std::string& traffic_source() const { return lan_host.empty() ? fw0 : lan_host; }
    bool has_ipv6() const { return !ipv6_target.empty(); }
    // "remote:name" for incus with a remote, else name.
    std::string qualified(const std::string& node) const;
};

struct Environments {
    std::string source;  // the file it came from
    std::vector<Environment> environments;
    std::vector<std::string> detection_order;  // names; the fallback is "netns"
    const Environment* find(const std::string& name) const;
    std::vector<std::string> names() const;
};

// Parses environments YAML; errors name the source, line and field.
Result<Environments> parse_environments(const std::string& yaml_text, const std::string& source_name);
Result<Environments> load_environments(const std::string& path);

// Where environments.yaml is found when no path is given: $SLUICE_ENVIRONMENTS,
// then cluster/environments.yaml in the working directory or a parent, then in
// the source tree sluice was built from, then /etc/sluice/environments.yaml.
Result<std::string> find_environments_file();
// find_environments_file() + load_environments(); `path` overrides if not "".
Result<Environments> load_default_environments(const std::string& path = "");

// --env auto: the first environment in detection_order whose firewall
// instance (fw0) is RUNNING per `incus info [remote:]NAME`; netns
// environments count without asking incus. When incus is not installed or
// nothing runs: the "netns" environment. `notes` (if given) says what was
// checked and why each was skipped.
Result<Environment> detect_environment(const Environments& environments, IncusCli& incus,
                                       std::vector<std::string>* notes = nullptr);

// name "auto" -> detect_environment, otherwise the named one (or an error
// listing the known names).
Result<Environment> select_environment(const Environments& environments, const std::string& name, IncusCli& incus,
                                       std::vector<std::string>* notes = nullptr);

// The executor for an environment: NetnsExecutor(prefix) for netns,
// IncusExecutor(remote, incus) for incus.
std::unique_ptr<Executor> make_executor(const Environment& environment, const std::string& prefix,
                                        std::shared_ptr<IncusCli> incus = nullptr);

}  // namespace sluice::cluster
