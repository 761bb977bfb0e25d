// The checks of `sluice bench scale` that the thing measured was in the
// path, as pure functions of what the tools printed (so that they are tested
// on synthetic inputs), and its schedule:
//   - `sluice check --json` on each generated config: valid or not, and what
//     this build says of its size (compile_ms, classifier_bytes);
//   - a sluice run's counters: XDP saw and forwarded the traffic, no policy
//     deny, no filter drop and no session-table-full drop hit it;
//   - a probe of the last rule: dropped, as all N rules must be in force,
//     with a control that must pass;
//   - iperf3 UDP: what got through the firewall is what reached the WAN
//     host's interface, not what iperf3's server read.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/sluice_firewall.h"
#include "common/result.h"

namespace sluice::bench {

// ------------------------------------------------------------------ sluice check
struct ScaleConfigCheck {
    bool ok = false;
    // The first number so named anywhere in the JSON (nested objects too);
    // null when this build does not print it.
    nlohmann::json compile_ms, classifier_bytes;
    std::string why;  // why it is not ok
};
ScaleConfigCheck read_sluice_check(const std::string& json_text);
// A number as the report prints it: floats with one decimal, integers as they are, "–" for null.
std::string check_number_text(const nlohmann::json& v);

// ------------------------------------------------------------------ sluice counters
struct ScaleRunCheck {
    std::string summary;            // "rx=… forward=… session-created=… passed=… (…) drops filter: …"
    std::vector<std::string> bad;   // why the run did not take the measured path; empty = it did
};
// From the counters' deltas over one run.
ScaleRunCheck check_sluice_run(const Counters& delta);

// ------------------------------------------------------------------ probes
// What the UDP probe's listener counted, by "SRC:PORT".
using ProbeCounts = std::map<std::string, uint64_t>;
struct ProbeVerdict {
    std::string verdict;  // "blocked" | "passed"
    std::string error;    // the control did not pass: the probe itself proves nothing
};
ProbeVerdict udp_probe_verdict(const ProbeCounts& received, const std::string& probe_source, int probe_port,
                               const std::string& control_source, int control_port);
// TCP: the probe's and the control's outcomes ("passed" | "blocked").
ProbeVerdict tcp_probe_verdict(const std::string& probe, const std::string& control);
// What a probe that got through means: sluice's filter in part (a) is a
// warning (a build that parses `filters:` but does not run them; the report
// says so), anything else stops the run.
enum class ProbeConsequence { Fine, Warn, Fatal };
ProbeConsequence probe_consequence(const std::string& part, const std::string& system, const std::string& verdict);

// ------------------------------------------------------------------ iperf3 UDP
struct UdpFigures {
    double gbps = 0;       // forwarded: UDP payload bit/s of the datagrams that reached the WAN host
    double sent_gbps = 0;  // what the client sent
    double mpps = 0;       // forwarded datagrams per second
    double loss_pct = 0;   // before the WAN host: 1 - forwarded / sent
    double app_gbps = 0;   // what iperf3's server read
};
// rx_packets: the WAN host interface's rx_packets delta over the run (it
// also saw the few packets of iperf3's control connection, hence the cap at
// what was sent).
UdpFigures udp_figures(uint64_t rx_packets, uint64_t sent_packets, double sent_seconds, double sent_bps,
                       double received_bps, int length);

// ------------------------------------------------------------------ schedule
struct ScalePoint {
    std::string kind;
    int count = 0;
    bool operator==(const ScalePoint&) const = default;
};
// The points of a pass: kinds in the given order on odd passes and reversed
// on even ones, counts ascending on odd passes and descending on even ones.
std::vector<ScalePoint> scale_points(const std::vector<std::string>& kinds, const std::vector<int>& counts, int pass);
// Part (a)'s protocols in a pass: UDP first on odd passes, TCP first on even ones.
std::vector<std::string> scale_protocols(int pass);

// "0 512 1024" -> ascending, without duplicates; an Error for anything not a number.
Result<std::vector<int>> parse_counts(const std::string& text);
std::vector<std::string> split_words(const std::string& text);

}  // namespace sluice::bench
