// What a failover did to the flows crossing the pair, read from what the
// endpoints recorded (never from the firewall's own account): the iperf3
// server's per-stream bytes in 0.1 s bins (`iperf3 -s -i 0.1 -J`) and the
// ping's reply timestamps (`ping -D`).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::bench {

struct StreamOutage {
    int socket = 0;
    int longest_zero_bins = 0;    // the longest run of bins in which the stream received nothing
    double bytes_after = 0;       // bytes received from `after` seconds on: 0 = it never resumed
};

struct TcpOutage {
    std::vector<StreamOutage> streams;
    double bin_seconds = 0;
    int survived = 0;             // streams with bytes_after > 0
    // The longest outage of any stream, in ms (zero bins x bin width).
    double longest_ms() const;
};

// From an iperf3 server's -J output (its intervals; the server run may have
// ended with an error such as the client vanishing: the intervals it has
// still count). `after`: seconds into the run from which a stream must have
// received data to count as surviving (e.g. 2 s after the failover).
Result<TcpOutage> parse_tcp_outage(const std::string& server_json, double after);

struct PingGap {
    int replies = 0;
    // The gap the failover made: the longest of those that overlap the
    // failover's window [from, to] (its start to the new node's takeover;
    // 0 when the window is empty or no gap overlaps it).
    double event_gap_ms = 0;
    double event_gap_from = 0;
    // The longest gap outside that window: the machine's own jitter, before
    // and after (ping's timer and the replies share two busy CPUs).
    double other_gap_ms = 0;
    int transmitted = 0, received = 0;  // ping's own summary line
    // The longest time between two consecutive replies, wherever it was.
    double longest_gap_ms() const { return event_gap_ms > other_gap_ms ? event_gap_ms : other_gap_ms; }
};

// From `ping -D` output: "[1796298452.586] 64 bytes from ...", and the
// summary "N packets transmitted, M received". ping has no JSON output; these
// two line shapes are all it is read for. `from`, `to` (ping -D's clock):
// the failover's window; none when to < from.
Result<PingGap> parse_ping_gap(const std::string& text, double from = 0, double to = -1);

}  // namespace sluice::bench
