#include "loader/policy_observation.h"

#include "loader/datapath.h"
#include "loader/map_io.h"

namespace sluice {

Status write_policy_observation(const Datapath& datapath, const CompiledConfig& config, uint8_t generation) {
    const int hits = datapath.map_fd(SLUICE_MAP_POLICY_HITS), log = datapath.map_fd(SLUICE_MAP_POLICY_LOG);
    const auto policies = static_cast<uint32_t>(config.policy_log.size());
    if (policies > POLICY_OBS_DEFAULT) return make_error("internal: more policies than policy_hits holds");
    if (auto s = write_array(log, SLUICE_MAP_POLICY_LOG, policy_obs_index(generation, 0), config.policy_log); !s)
        return s;
    if (auto s = write_array(log, SLUICE_MAP_POLICY_LOG, policy_obs_index(generation, SESSION_POLICY_RELATED),
                             std::vector<uint32_t>{config.default_log});
        !s)
        return s;
    // Counters of this generation's slots start at zero, as filter_hits do;
    // slots beyond the policies are never counted (no policy has their id).
    if (auto s = zero_percpu(hits, SLUICE_MAP_POLICY_HITS, policy_obs_index(generation, 0), policies,
                             sizeof(policy_counter));
        !s)
        return s;
    return zero_percpu(hits, SLUICE_MAP_POLICY_HITS, policy_obs_index(generation, SESSION_POLICY_RELATED), 1,
                       sizeof(policy_counter));
}

}  // namespace sluice
