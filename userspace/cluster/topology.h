// The lab topologies, described once as data and built by one builder: the
// netns cluster (`sluice cluster up`), the integration tests and benchmarks
// (`sluice cluster up --topology single --bare`) and the BPF test fixture all
// use these descriptions (docs/design.md "Cluster and perf-test").
//
//   single   P-lan eth0 ── lan0 P-fw wan0 ── eth0 P-wan
//   cluster  P-lan-host eth0 ── br-lan (P-switch) ──┬── lan0 P-fw0 wan0 ──┬── br-wan (P-switch) ── eth0 P-wan-host
//                                                   └── lan0 P-fw1 wan0 ──┘
//                                          P-fw0 fab0 ───── fab0 P-fw1
//   cluster-ha  the cluster, the hosts routed through the pair's virtual
//            addresses (an HA pair, docs/ha.md: sluice runs there with --node)
//   bpf-test P-fw: lan0 <-> lan0p, wan0 <-> wan0p (both ends inside), permanent
//            neighbours for the LAN and WAN hosts (BPF_PROG_TEST_RUN's FIB lookups)
//
// Every address comes from 198.18.0.0/15 and 2001:2::/48. The namespace of
// node N is "P-N"; every veth is created inside its namespaces with its final
// names, so nothing appears in the root namespace and two labs never collide.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::cluster {

// Addresses of the LAN host, the firewalls and the WAN host. The single and
// bpf-test topologies use the fw0 addresses for their one firewall.
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
// The HA pair's virtual gateway addresses (cluster-ha): whichever node is
// active holds them, with the virtual MACs below.
inline constexpr const char* kLanVip4 = "198.18.1.254";
inline constexpr const char* kLanVip6 = "2001:2:0:1::fe";
inline constexpr const char* kWanVip4 = "198.18.100.254";
inline constexpr const char* kWanVip6 = "2001:2:0:100::fe";
inline constexpr const char* kLanVmac = "02:53:4c:00:01:01";
inline constexpr const char* kWanVmac = "02:53:4c:00:01:02";
inline constexpr const char* kLanNet4 = "198.18.1.0/24";
inline constexpr const char* kLanNet6 = "2001:2:0:1::/64";
// The bpf-test topology's permanent neighbours (no host answers ARP there).
inline constexpr const char* kLanHostMac = "02:00:00:00:01:10";
inline constexpr const char* kWanHostMac = "02:00:00:00:64:c8";

struct Topology {
    struct Node {
        std::string name;
        std::vector<std::string> sysctls;  // "net.ipv4.ip_forward=1"
        bool firewall = false;             // sluice may run here (cluster down runs `sluice down` in it)
    };
    struct Bridge {
        std::string node, name;
        bool up = true;
    };
    // A veth pair; b_bridge set: end b is a port of that bridge on node b.
    struct Link {
        std::string a_node, a_dev, b_node, b_dev, b_bridge;
    };
    struct Address {
        std::string node, dev, cidr;
    };
    struct Route {
        std::string node, prefix, via;  // prefix "default" or a CIDR
    };
    struct Neighbour {
        std::string node, dev, address, mac;
    };

    std::string name;  // "single", "cluster", "bpf-test", ...
    std::vector<Node> nodes;
    std::vector<Bridge> bridges;
    std::vector<Link> links;
    std::vector<Address> addresses;
    std::vector<Route> routes;
    std::vector<Neighbour> neighbours;
    // After the build: this node must reach these addresses (ping), or the build failed.
    std::string probe_from;
    std::vector<std::string> probe_targets;
    std::string server_node;  // where `cluster up` starts iperf3 -s ("" = nowhere)
    // The firewalls are an HA pair: the hosts route through virtual addresses
    // that exist only once sluice has elected a node, so the probe runs only
    // after sluice starts, and each node is started with --node NAME.
    bool ha_pair = false;

    std::vector<std::string> firewall_nodes() const;
    std::vector<std::string> node_names() const;
};

const Topology& single_topology();    // LAN host, one firewall, WAN host
const Topology& cluster_topology();   // the two-node cluster with its switch and fabric
const Topology& cluster_ha_topology();  // the same, the hosts routed through the HA pair's virtual addresses
const Topology& single_dmz_topology();  // single plus an empty bridge dmz0 on the firewall (attach-mode tests)
const Topology& bpf_test_topology();  // one namespace for BPF_PROG_TEST_RUN (tests/support/netns_fixture)

// Every topology by name; nullptr for an unknown name.
const Topology* find_topology(const std::string& name);
std::vector<std::string> topology_names();

std::string namespace_name(const std::string& prefix, const std::string& node);  // "P-fw0"

// The probe alone: probe_from reaches every probe target (ping, a few tries).
Status probe_topology(const Topology& topology, const std::string& prefix);

// Creates the namespaces, bridges, links, addresses, routes, neighbours and
// sysctls, then runs the probe. The first failing step is the error (with the
// command and its output); what was made is left for remove_topology, which
// the caller runs (cluster_up does, and so does NetnsFixture's destructor).
Status build_topology(const Topology& topology, const std::string& prefix, std::ostream& log);

// Deletes the topology's namespaces (and with them every link). Absent ones
// are fine; the error lists those that could not be deleted.
Status remove_topology(const Topology& topology, const std::string& prefix);

// Whether /run/netns/NAME exists.
bool namespace_exists(const std::string& name);

}  // namespace sluice::cluster
