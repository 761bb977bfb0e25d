// The zone-pair table of a rule list (policies, source NAT): for each
// (from zone, to zone) that some rule names, the rules that name it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/bitset.h"
#include "compiler/compiled_config.h"

namespace sluice::compiler {

using ZonePair = std::pair<uint16_t, uint16_t>;  // (from zone id, to zone id)

// rule_zones[i] is rule i's pair; bit i is set in that pair's entry.
std::vector<std::pair<policy_zone_pair_key, Bits>> zone_pair_entries(const std::vector<ZonePair>& rule_zones,
                                                                     uint8_t generation, size_t words);

}  // namespace sluice::compiler
