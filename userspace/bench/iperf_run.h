// One iperf3 measurement in the lab: a one-shot server (`iperf3 -s -1 -J`)
// on the server node, the client (`-J`) on the client node, both outputs
// read by perftest's tested parser. The server's JSON says who reached it,
// which proves the path (e.g. the firewall's address under source NAT).
#pragma once

#include <string>

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
};

struct IperfOutcome {
    perftest::IperfResult client;
    std::string server_saw;   // the client address the server saw
    double gbps() const { return client.receiver_bps / 1e9; }
};

// Runs one measurement; an Error carries iperf3's own words.
Result<IperfOutcome> run_iperf(Lab& lab, const IperfSpec& spec);

}  // namespace sluice::bench
