#include "compiler/zone_pairs.h"

#include <cstring>
#include <map>

namespace sluice::compiler {

std::vector<std::pair<policy_zone_pair_key, Bits>> zone_pair_entries(const std::vector<ZonePair>& rule_zones,
                                                                     uint8_t generation, size_t words) {
    std::map<ZonePair, Bits> pairs;
    for (uint32_t i = 0; i < rule_zones.size(); ++i) {
        auto [it, inserted] = pairs.try_emplace(rule_zones[i], Bits(words));
        set_bit(it->second, i);
    }
    std::vector<std::pair<policy_zone_pair_key, Bits>> out;
    for (const auto& [zones, bits] : pairs) {
        policy_zone_pair_key key;
        std::memset(&key, 0, sizeof key);
        key.from_zone = zones.first;
        key.to_zone = zones.second;
        key.generation = generation;
        out.emplace_back(key, bits);
    }
    return out;
}

}  // namespace sluice::compiler
