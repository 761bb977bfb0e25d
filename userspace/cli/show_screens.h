// `sluice show screens`: per zone, its screens as configured (state file) and
// what they did (screen_hits: SYN-proxy cookies sent, returned valid and
// invalid, SYNs sent to servers, handshakes completed; counted since the
// instance's maps were created).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "loader/instance_paths.h"
#include "daemon/published_state.h"

namespace sluice::cli {

int show_screens(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
                 std::ostream& err);

}  // namespace sluice::cli
