// The host-inbound part of the state file: service ids and names, and what
// each zone allows, for `sluice show host-inbound`.
#pragma once

#include <nlohmann/json.hpp>

#include "compiler/compiled_host_inbound.h"

namespace sluice {

nlohmann::json host_inbound_state_json(const CompiledHostInbound& host);

}  // namespace sluice
