// Whether a run of the inspection benchmark took the path its label names,
// from two readings of sluice's counters around it: `sluice show stats
// --json` (the datapath) and `sluice show inspect --json` (the stage's
// counters per ruleset, its per-pattern matches and the fast path's punt
// counters), flattened here. Pure functions over those readings, so that
// every rule is unit-tested on synthetic counters.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/inspect_patterns.h"
#include "bench/sluice_firewall.h"
#include "common/result.h"

namespace sluice::bench {

// One ruleset of `show inspect --json`: the stage's counters ("connections",
// "bytes_client_to_server", "matches", "handoffs", ...) with the fast path's
// punt counters as "fp_<name>" ("fp_fail_open_packets", ...), and the
// matches of each pattern by name.
struct RulesetCounters {
    Counters counters;
    Counters patterns;
};

struct InspectCounters {
    bool overloaded = false;  // stage.overloaded
    std::map<std::string, RulesetCounters> rulesets;
};

// Flattens `sluice show inspect --json`; an Error when the shape is not that.
Result<InspectCounters> flatten_inspect(const nlohmann::json& show_inspect);

// The matches of `pattern` in `ruleset` (0 when either is absent).
uint64_t pattern_matches(const InspectCounters& c, const std::string& ruleset, const std::string& pattern);

// One reading of both.
struct PathSnapshot {
    Counters stats;
    InspectCounters inspect;
};

// What a run should have shown. mode: "fast" | "inspect" | "handoff".
struct PathExpectation {
    std::string mode;
    uint64_t received = 0;     // bytes the iperf3 server received (0 for short connections)
    uint64_t connections = 0;  // at least this many accepted by the stage (inspect, handoff)
    uint64_t streams = 0;      // iperf3 data streams (handoff)
    uint64_t handoff_bytes = kHandoffBytes;
};

struct PathCheck {
    // "rx=… xdp_redirect=… passed=… punted=… punt-socket-assigned=… dropped=…
    // stage: connections=… scanned_c2s=… scanned_s2c=…" (+ the hand-off's).
    std::string summary;
    std::vector<std::string> problems;  // empty: the run took the path
    Counters datapath;                  // the stats delta
    Counters stage;                     // the own ruleset's delta (fast: every ruleset's, summed)
    bool ok() const { return problems.empty(); }
    std::string problem_text() const;   // problems joined by "; "
};

// The ruleset a mode's traffic belongs to ("" for the fast path).
std::string own_ruleset(const std::string& mode);

// Compares the readings before and after one run:
//   inspect = the fast path punted, the stage accepted the connections
//     (ruleset "bench") and scanned at least every byte the server received
//     (the stage forwards only what it has scanned), with no match, reset,
//     drop, offload, hand-off, stage error, fail-open, fail-closed or verdict
//     drop;
//   handoff = the fast path punted, the stage accepted the connections
//     (ruleset "bench-handoff"), scanned at least inspect-bytes of each of
//     the data streams, handed at least that many back to XDP (handoffs),
//     refused none (handoff_refused), and XDP renumbered segments after the
//     hand-off (tcp-spliced-after-inspection); no match, reset, drop or stage
//     error;
//   both fail when another ruleset saw a connection or the stage reported
//     itself overloaded (before or after);
//   fast = nothing punted, no ruleset saw a connection or a byte.
// Every mode fails when drop-session-table-full rose.
PathCheck check_path(const PathExpectation& expect, const PathSnapshot& before, const PathSnapshot& after);

}  // namespace sluice::bench
