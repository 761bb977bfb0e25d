// A generation's per-policy observation tables (maps/observe.h): the flow-log
// flags of each policy and of the default action, and zeroed counters;
// made active by the runtime_cfg flip like the rest.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "compiler/compiled_config.h"

namespace sluice {

class Datapath;

Status write_policy_observation(const Datapath& datapath, const CompiledConfig& config, uint8_t generation);

// Index into policy_hits / policy_log of (generation, policy id);
// SESSION_POLICY_RELATED (the default action) maps to its own slot.
inline uint32_t policy_obs_index(uint8_t generation, uint32_t policy_id) {
    const uint32_t slot = policy_id < POLICY_OBS_DEFAULT ? policy_id : POLICY_OBS_DEFAULT;
    return uint32_t(generation & 1) * POLICY_OBS_SLOTS + slot;
}

}  // namespace sluice
