// One iperf3 client run, read from its `-J` JSON (never from its text): what
// the sender pushed, what the receiver got, and the sender's retransmits. A
// run iperf3 itself reports as failed (an `error` field) is an Error whose
// message carries iperf3's words.
#pragma once

#include <string>

#include "common/result.h"

namespace sluice::perftest {

struct IperfResult {
    double sender_bps = 0;      // end.sum_sent.bits_per_second
    double receiver_bps = 0;    // end.sum_received.bits_per_second
    double receiver_bytes = 0;  // end.sum_received.bytes
    long long retransmits = 0;  // end.sum_sent.retransmits (TCP only; 0 otherwise)
    int streams = 0;            // start.test_start.num_streams
    double seconds = 0;         // end.sum_received.seconds
    std::string remote_host;    // start.connecting_to.host
    std::string version;        // start.version, e.g. "iperf 3.12"
};

// Parses iperf3 3.x client JSON. An `error` field, invalid JSON or missing
// totals are errors ("iperf3: unable to connect to server: ...").
Result<IperfResult> parse_iperf_json(const std::string& text);

// The client address an iperf3 server's `-J` output saw (start.connected[0]
// .remote_host), an IPv4-mapped address given as plain IPv4: who reached the
// server, e.g. the firewall's address when source NAT is in the path.
Result<std::string> parse_iperf_server_peer(const std::string& text);

}  // namespace sluice::perftest
