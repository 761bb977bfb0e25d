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
};

// The goals the records allow, for every configuration other than off:
// established packets (off CPU ns/pkt / its CPU ns/pkt at the fixed rate, a
// throughput equivalent, >= 0.97) and new connections per second (its
// rate / off's, >= 0.9).
std::vector<ObserveGoal> observe_goals(const std::vector<nlohmann::json>& records);

std::string observe_report(const std::vector<nlohmann::json>& records);

}  // namespace sluice::bench
