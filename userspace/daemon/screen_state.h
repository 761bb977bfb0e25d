// The screens part of the state file: each zone's screens as configured, for
// `sluice show screens`.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

extern "C" {
#include "sluice_maps.h"
}

#include "compiler/compiled_config.h"

namespace sluice {

nlohmann::json screen_state_json(const std::vector<CompiledZone>& zones, const std::vector<zone_screen>& screens);

}  // namespace sluice
