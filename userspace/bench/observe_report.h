// The report of `sluice bench observe`, from its JSON-lines records alone:
// (a) the established flow's CPU time per forwarded packet at a fixed rate
// and unlimited, (b) new connections per second, each configuration against
// off of the same pass; and issue 21's goal read off those per-pass ratios.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/results.h"

namespace sluice::bench {

// (a)'s cycles per pass at most: the report keys a window pass * 1000 + cycle.
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
    std::optional<Spread> spread;
    int passes_met = 0;  // passes whose own ratio reached the goal
    bool met = false;    // the median reached it
    // Not a goal when set: what the report's goal column says instead. (a)'s
    // rows (the whole machine's CPU per packet, end to end) and their control
    // (off's window over off's window of the next cycle: what (a) gives where
    // nothing differs); the established packet's goal is (c)'s, the
    // per-packet cost itself, which (a) cannot resolve to 3 % on a VM whose
    // CPU time per packet moves by tens of % in spells (docs/benchmarks.md).
    std::string no_goal;
};

// The goals the records allow, for every configuration other than off:
// established packets (off CPU ns/pkt / its CPU ns/pkt at the fixed rate, a
// throughput equivalent, >= 0.97) and new connections per second (its
// rate / off's, >= 0.9); (a)'s control (off against off); (c)'s
// established packet per build and family (>= 0.97). (a)'s rows and the
// control carry no goal (ObserveGoal::no_goal).
std::vector<ObserveGoal> observe_goals(const std::vector<nlohmann::json>& records);

std::string observe_report(const std::vector<nlohmann::json>& records);

}  // namespace sluice::bench
