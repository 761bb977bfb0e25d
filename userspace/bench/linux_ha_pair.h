// The standard Linux HA pair, the system `sluice bench ha` compares with, on
// the cluster-ha lab: on fw0 and fw1 nftables with conntrack
// (nf_conntrack_tcp_loose=0: a packet of a connection the table does not
// know is invalid and dropped), keepalived (VRRPv3, 20 ms adverts, one sync
// group holding the LAN and WAN virtual addresses, fw0 priority 200, fw1
// 100) and conntrackd (FTFW over the fabric, UDP). keepalived's notify
// script drives conntrackd as its documentation's primary-backup example
// does: on MASTER commit the external cache to the kernel, then resync; on
// BACKUP ask the peer for a resync. Every daemon runs inside the lab's
// namespaces with files in the lab's scratch folder; nothing touches the host.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/lab.h"
#include "bench/nft_firewall.h"
#include "cluster/process.h"
#include "common/result.h"

namespace sluice::bench {

class LinuxHaPair {
public:
    explicit LinuxHaPair(Lab& lab);
    ~LinuxHaPair();

    // Loads nftables, starts conntrackd and keepalived on both nodes and waits
    // (up to 20 s) until fw0 holds the virtual addresses and fw1 does not.
    Status start();
    // The node holding the LAN virtual address ("" when none does).
    Result<std::string> holder();
    // A node's crash: SIGKILL to keepalived (parent and VRRP child) and
    // conntrackd (the kernel keeps forwarding: the caller takes the links down).
    Status kill_daemons(const std::string& node);
    // SIGSTOP to the same processes: frozen, they send nothing more.
    Status freeze_daemons(const std::string& node);
    // A planned switchover: SIGTERM to fw0's keepalived, which sends
    // priority-0 adverts and drops the virtual addresses (its conntrackd
    // stays up, as on a node being taken out for maintenance).
    Status switch_over(const std::string& node);
    // The packets fw's nftables counters have counted, and its conntrack count.
    Result<uint64_t> counted_packets(const std::string& node);
    Result<uint64_t> conntrack_entries(const std::string& node);
    // Seconds (CLOCK_REALTIME) at which the notify script saw NODE enter
    // MASTER, the last time: the takeover instant.
    std::optional<double> became_master_at(const std::string& node) const;
    std::string logs(const std::string& node) const;

private:
    struct Node {
        std::string name, dir, conntrackd_conf, keepalived_conf;
        std::optional<cluster::BackgroundProcess> conntrackd, keepalived;
    };
    Status start_node(Node& n, int index);
    std::vector<int> daemon_pids(const std::string& node) const;

    Lab& lab_;
    std::string notify_script_;
    std::map<std::string, Node> nodes_;
    std::map<std::string, std::unique_ptr<NftFirewall>> nft_;
};

// The `ip -j addr show dev DEV` output holds ADDRESS (without its prefix length).
bool holds_address(const std::string& ip_json, const std::string& address);

}  // namespace sluice::bench
