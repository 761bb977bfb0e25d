// One iperf3 measurement in the lab: a one-shot server (`iperf3 -s -1 -J`)
// on the server node, the client (`-J`) on the client node, both outputs
// read by perftest's tested parser. The server's JSON says who reached it,
// which proves the path (e.g. the firewall's address under source NAT).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "bench/lab.h"
#include "common/result.h"
#include "perftest/iperf_result.h"

namespace sluice::bench {

struct IperfSpec {
    std::string client_node = "lan";
    std::string server_node = "wan";
    std::string target;       // the server's address
    std::string bind;         // client -B ("" = the kernel picks)
    int port = 5201;
    int seconds = 5;
    int streams = 4;
    // Additions (the defaults keep the TCP run above as it was):
    bool udp = false;             // -u
    int length = 0;               // -l, the UDP payload (0 = iperf3's default)
    std::string bitrate;          // -b ("" = iperf3's default; "0" = as fast as the client can)
    int client_cpu = -1;          // taskset -c for the client (-1 = not pinned)
    int server_cpu = -1;          // taskset -c for the server
    int connect_timeout_ms = 0;   // --connect-timeout (0 = iperf3's default)
    // When set: the server node's rx_packets on this device (`ip -j -s link`)
    // before and after the client's run, e.g. what got through a firewall.
    std::string count_rx_device;
};

struct IperfOutcome {
    perftest::IperfResult client;
    std::string server_saw;   // the client address the server saw
    uint64_t sent_packets = 0;   // UDP: end.sum_sent.packets
    double sent_seconds = 0;     // end.sum_sent.seconds
    uint64_t rx_packets = 0;     // count_rx_device's rx_packets delta over the client's run
    double gbps() const { return client.receiver_bps / 1e9; }
};

// Runs one measurement; an Error carries iperf3's own words.
Result<IperfOutcome> run_iperf(Lab& lab, const IperfSpec& spec);

// The sender's end.sum_sent.packets and .seconds of a client's -J output
// (UDP runs count packets; TCP runs have no "packets": 0).
Result<std::pair<uint64_t, double>> parse_iperf_sent(const std::string& client_json);
// stats64.rx.packets of `ip -j -s link show dev DEV`.
Result<uint64_t> parse_rx_packets(const std::string& ip_json);

}  // namespace sluice::bench
