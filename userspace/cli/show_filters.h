// `sluice show filters`: every stateless filter of the running config (state
// file), the interfaces it guards, and packets/bytes per rule (filter_hits of
// the active generation; counters start from zero when a config is applied).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "loader/instance_paths.h"
#include "daemon/published_state.h"

namespace sluice::cli {

int show_filters(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
                 std::ostream& err);

}  // namespace sluice::cli
