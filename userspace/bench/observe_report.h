// The report of `sluice bench observe`, from its JSON-lines records alone:
// (a) the established flow's CPU time per forwarded packet at a fixed rate
// and unlimited, each window against the off windows either side of it;
// (b) new connections per second against off of the same pass; (c) the
// datapath's own cost; and issue 21's goals read off those ratios.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/results.h"

namespace sluice::bench {

// (a)'s cycles per pass at most: the report keys a window pass * 10000 +
// its slot in the pass (two per configuration and cycle, and the last).
constexpr int kObserveMaxCycles = 999;

// a[p] / b[p] for every pass both have (b[p] > 0), by pass.
std::map<int, double> ratios_by_pass(const std::map<int, double>& a, const std::map<int, double>& b);

// One goal of issue 21 (point 4) for one configuration against off.
struct ObserveGoal {
    std::string config;   // "on", "log"
    std::string measure;  // "established", "connections"
    std::string label;    // what the ratio is, for the report
    double goal = 0;      // the ratio must be at least this
    std::map<int, double> per_pass;
    // (a): the ratio of every window; when set, spread, ci95 and at_or_above
    // are over these rather than over the passes.
    std::vector<double> windows;
    std::optional<Spread> spread;
    std::optional<MedianInterval> ci95;  // of the median
    int at_or_above = 0;  // windows (or passes) whose own ratio reached the goal
    bool met = false;     // the median reached it
    // Not a goal when set: what the report's goal column says instead ((a)'s
    // control, off measured as the others are).
    std::string no_goal;
};

// The goals the records allow, for every configuration other than off:
// established packets (the machine's CPU ns/pkt of the off windows either
// side over its own at the fixed rate, a throughput equivalent, the median
// over every window >= 0.97) and new connections per second (its rate /
// off's, the median over passes >= 0.9); (a)'s control (off against off,
// no goal: ObserveGoal::no_goal); (c)'s established packet per build and
// family (>= 0.97).
std::vector<ObserveGoal> observe_goals(const std::vector<nlohmann::json>& records);

std::string observe_report(const std::vector<nlohmann::json>& records);

}  // namespace sluice::bench
