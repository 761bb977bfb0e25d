#include "loader/nat_tables.h"

#include <cstddef>

#include "loader/datapath.h"
#include "loader/map_io.h"

namespace sluice {
namespace {

template <typename K, typename V>
Status write_map(const Datapath& datapath, const char* name, const std::vector<std::pair<K, V>>& entries) {
    return write_entries(datapath.map_fd(name), name, entries);
}

}  // namespace

Status write_nat_generation(const Datapath& datapath, const CompiledNat& nat) {
    const uint8_t gen = nat.generation;
    // Every key but nat_dst_key is a policy key (generation at the same offset).
    constexpr size_t kPolicyKey = offsetof(policy_lpm_key_v4, generation);
    const std::pair<const char*, size_t> keyed[] = {
        {SLUICE_MAP_NAT_DST, offsetof(nat_dst_key, generation)},
        {SLUICE_MAP_NAT_MAP_IN_V4, kPolicyKey},
        {SLUICE_MAP_NAT_MAP_IN_V6, kPolicyKey},
        {SLUICE_MAP_NAT_MAP_OUT_V4, kPolicyKey},
        {SLUICE_MAP_NAT_MAP_OUT_V6, kPolicyKey},
        {SLUICE_MAP_NAT_SRC_ZONES, kPolicyKey},
        {SLUICE_MAP_NAT_SRC_SADDR_V4, kPolicyKey},
        {SLUICE_MAP_NAT_SRC_SADDR_V6, kPolicyKey},
        {SLUICE_MAP_NAT_SRC_DADDR_V4, kPolicyKey},
        {SLUICE_MAP_NAT_SRC_DADDR_V6, kPolicyKey},
    };
    for (const auto& [name, offset] : keyed)
        if (auto s = delete_generation(datapath.map_fd(name), name, gen, offset); !s) return s;

    if (auto s = write_map(datapath, SLUICE_MAP_NAT_DST, nat.destination); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_MAP_IN_V4, nat.map_in_v4); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_MAP_IN_V6, nat.map_in_v6); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_MAP_OUT_V4, nat.map_out_v4); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_MAP_OUT_V6, nat.map_out_v6); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_SRC_ZONES, nat.source_zones); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_SRC_SADDR_V4, nat.source_saddr_v4); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_SRC_SADDR_V6, nat.source_saddr_v6); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_SRC_DADDR_V4, nat.source_daddr_v4); !s) return s;
    if (auto s = write_map(datapath, SLUICE_MAP_NAT_SRC_DADDR_V6, nat.source_daddr_v6); !s) return s;
    if (auto s = write_array(datapath.map_fd(SLUICE_MAP_NAT_SRC_RULES), SLUICE_MAP_NAT_SRC_RULES,
                             uint32_t(gen) * NAT_MAX_SOURCE_RULES, nat.source_rules);
        !s)
        return s;
    return write_array(datapath.map_fd(SLUICE_MAP_NAT_POOLS), SLUICE_MAP_NAT_POOLS, uint32_t(gen) * NAT_POOL_SLOTS,
                       nat.pools);
}

}  // namespace sluice
