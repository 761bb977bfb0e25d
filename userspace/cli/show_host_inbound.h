// `sluice show host-inbound`: per zone, what the firewall answers there
// (state file) and the packets accepted and dropped per service (host_hits
// of the active generation; counters start from zero when a config is
// applied). Built-in rows: reply, icmp-error, fragment, other.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "loader/instance_paths.h"
#include "daemon/published_state.h"

namespace sluice::cli {

int show_host_inbound(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
                      std::ostream& err);

}  // namespace sluice::cli
