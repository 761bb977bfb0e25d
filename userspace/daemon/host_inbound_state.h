// The host-inbound part of the state file: service ids and names, and what
// each zone allows, for `sluice show host-inbound`.
#pragma once

#include "daemon/published_state.h"

#include "compiler/compiled_host_inbound.h"

namespace sluice {

state::HostInbound host_inbound_state(const CompiledHostInbound& host);

}  // namespace sluice
