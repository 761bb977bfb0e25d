// `sluice show inspect`: per ruleset, what the fast path did with its punted
// flows (punt_stats), what the stage scanned and decided (the shared-memory
// counters file), and per pattern how often it matched. Building the report
// is pure, so its shape is testable from given inputs.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "inspect/counter_table.h"
#include "loader/instance_paths.h"

#include "daemon/published_state.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::cli {

struct InspectReportInput {
    state::Inspect inspect;                                 // the state file's "inspect"
    std::optional<inspect::CounterSnapshot> counters;      // absent: the stage never ran
    std::map<uint16_t, punt_ruleset_stats> fast_path;      // by ruleset id, summed over CPUs
    bool stage_up_in_datapath = false;                     // punt_cfg.stage_up
    bool overloaded = false;                               // punt_cfg.overloaded
    bool daemon_alive = true;                              // the state file's pid runs
};

// {"stage": {...}, "rulesets": [{..., "fast_path": {...}, "stage": {...}, "patterns": [...]}]}
nlohmann::json inspect_report(const InspectReportInput& in);
void print_inspect_report(const nlohmann::json& report, std::ostream& out);

int show_inspect(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out);

}  // namespace sluice::cli
