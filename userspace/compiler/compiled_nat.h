// The NAT map entries of one generation (maps/nat.h), as the compiler emits
// them and the loader writes them. Array maps come as every slot of the
// generation, unused ones zero, so writing them also clears what an older
// config left in that generation.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

struct CompiledNat {
    uint8_t generation = 0;
    // nat.destination
    std::vector<std::pair<nat_dst_key, nat_dst_value>> destination;
    // nat.static and nat.nptv6: in = keyed by `outside`, out = keyed by `inside`
    std::vector<std::pair<policy_lpm_key_v4, nat_prefix_value>> map_in_v4, map_out_v4;
    std::vector<std::pair<policy_lpm_key_v6, nat_prefix_value>> map_in_v6, map_out_v6;
    // nat.source: rule bit i = nat.source[i]
    std::vector<std::pair<policy_zone_pair_key, nat_rule_bits>> source_zones;
    std::vector<std::pair<policy_lpm_key_v4, nat_rule_bits>> source_saddr_v4, source_daddr_v4;
    std::vector<std::pair<policy_lpm_key_v6, nat_rule_bits>> source_saddr_v6, source_daddr_v6;
    std::vector<nat_source_rule> source_rules;  // NAT_MAX_SOURCE_RULES slots, index = rule bit
    // nat.pools: NAT_POOL_SLOTS slots, index = pool index * 2 + (family == IPv6)
    std::vector<nat_pool> pools;
};

}  // namespace sluice
