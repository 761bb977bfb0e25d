// The screens part of the state file: each zone's screens as configured, for
// `sluice show screens`.
#pragma once

#include "daemon/published_state.h"
#include <vector>

extern "C" {
#include "sluice_maps.h"
}

#include "compiler/compiled_config.h"

namespace sluice {

std::vector<state::ScreenZone> screen_state(const std::vector<CompiledZone>& zones, const std::vector<zone_screen>& screens);

}  // namespace sluice
