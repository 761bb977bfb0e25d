// The two-node cluster on a real Incus daemon (`sluice cluster up|down|status
// --env <incus environment>`), the same topology as the netns cluster
// (docs/cluster.md):
//
//   lan-host ── sluice-lan ──┬── fw0 ──┬── sluice-wan ── wan-host
//                            └── fw1 ──┘
//               fw0 ── sluice-fab ── fw1
//
// Networks are Incus bridges with no address of their own (so no DHCP, DNS or
// NAT), named sluice-* (scripts/incus-setup.sh's host guard drops forwarding
// between them and any other interface); nodes get benchmarking-range
// addresses from `ip` run inside them. Firewalls get the sluice Debian
// package and run it as the systemd unit `sluice` with the cluster's config;
// the WAN host runs `iperf3 -s` as the transient unit sluice-iperf3.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cluster/environment.h"
#include "cluster/incus_cli.h"
#include "common/result.h"

namespace sluice::cluster {

struct IncusNodePlan {
    std::string role;   // lan-host, fw0, fw1, wan-host
    std::string name;   // instance name, "remote:name" with a remote
    bool firewall = false;
    bool vm = false;
    // Interface name in the instance -> network, in creation order.
    std::vector<std::pair<std::string, std::string>> nics;
    // Run inside the instance once it is up: addresses, routes, forwarding.
    std::vector<std::vector<std::string>> configure;
};

struct IncusPlan {
    std::string owner;                  // the environment's name, kept on what up creates
    std::string remote;                 // "" = the local daemon
    std::string image;
    std::vector<std::string> networks;  // "remote:sluice-lan", ...
    std::vector<IncusNodePlan> nodes;   // lan-host, fw0, fw1, wan-host (those the environment has)
};

// What `up` builds for an environment (pure: no incus call).
IncusPlan plan_incus_cluster(const Environment& environment);

// The incus arguments that create a network / an instance with its NICs
// (without starting it), as `up` and `--dry-run` use them.
std::vector<std::vector<std::string>> incus_create_network(const std::string& network, const std::string& owner);
std::vector<std::vector<std::string>> incus_create_instance(const IncusPlan& plan, const IncusNodePlan& node);

// Ok when `path` is a Debian package of sluice (`dpkg-deb --field PATH
// Package` says "sluice"), else an Error that says what the file is. `up`
// checks this before it creates anything.
Status check_sluice_package(const std::string& path, const CommandRunner& runner = local_runner());

// The NIC devices of the default profile ("eth0 (network incusbr0)"), which
// every instance `up` creates gets: `up` refuses to create anything while
// there is one, since it would give the lab a way out.
Result<std::vector<std::string>> default_profile_nics(IncusCli& incus, const std::string& remote);

struct IncusUpOptions {
    std::string package;   // the sluice .deb for the firewalls; "" = build/sluice_*.deb of this source tree
    bool dry_run = false;  // print the incus commands, run nothing
};

// Builds what is missing (idempotent: existing networks and instances are
// kept), installs and starts sluice on the firewalls, iperf3 -s on the WAN
// host. On a failure, removes what this run created and says what failed.
Status incus_cluster_up(const Environment& environment, IncusCli& incus, const IncusUpOptions& options,
                        std::ostream& out);

// Deletes the plan's instances and networks that `up` made for this
// environment (marked user.sluice.cluster=<env>); same-named objects sluice
// did not make are left alone and reported.
Status incus_cluster_down(const Environment& environment, IncusCli& incus, bool dry_run, std::ostream& out);

// Per instance and network: present, state; per firewall: sluice attached.
struct IncusClusterStatus {
    struct Item {
        std::string kind;    // "instance" | "network"
        std::string role;    // instance role or network name
        std::string name;
        std::string state;   // RUNNING, STOPPED, ABSENT, PRESENT, ...
        std::string detail;  // "sluice attached on lan0, wan0, fab0", an error
    };
    std::vector<Item> items;
    bool healthy = false;
};
Result<IncusClusterStatus> incus_cluster_status(const Environment& environment, IncusCli& incus);

}  // namespace sluice::cluster
