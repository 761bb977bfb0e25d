#include "compiler/lpm_tables.h"

#include <map>
#include <set>

namespace sluice::compiler {
namespace {

using config::Family;
using PrefixKey = std::pair<int, std::array<uint8_t, 16>>;  // (length, masked address)

// The rules that list each prefix directly, for one family and field.
struct DirectPrefixes {
    std::map<PrefixKey, Bits> rules_by_prefix;
    std::set<int> lengths;
};

DirectPrefixes collect(const std::vector<const PrefixSet*>& fields, Family family, size_t words) {
    DirectPrefixes direct;
    auto add = [&](int length, const std::array<uint8_t, 16>& addr, uint32_t rule) {
        auto [it, inserted] = direct.rules_by_prefix.try_emplace(PrefixKey{length, addr}, Bits(words));
        set_bit(it->second, rule);
        direct.lengths.insert(length);
    };
    // /0 is always present so every address finds an entry (possibly empty).
    direct.rules_by_prefix.try_emplace(PrefixKey{0, {}}, Bits(words));
    direct.lengths.insert(0);
    for (uint32_t i = 0; i < fields.size(); ++i) {
        if (!fields[i]) continue;
        if (fields[i]->any) add(0, {}, i);
        for (const auto& prefix : fields[i]->prefixes)
            if (prefix.family == family) add(prefix.length, prefix.addr, i);
    }
    return direct;
}

template <typename Key>
std::vector<std::pair<Key, Bits>> emit(const DirectPrefixes& direct, uint8_t generation, size_t words) {
    std::vector<std::pair<Key, Bits>> out;
    out.reserve(direct.rules_by_prefix.size());
    for (const auto& [prefix, own] : direct.rules_by_prefix) {
        const auto& [length, addr] = prefix;
        Bits value(words);
        // Ancestors-or-self: only lengths that occur need probing.
        for (int ancestor : direct.lengths) {
            if (ancestor > length) break;
            auto it = direct.rules_by_prefix.find(PrefixKey{ancestor, config::mask_address(addr, ancestor)});
            if (it != direct.rules_by_prefix.end()) or_into(value, it->second);
        }
        out.emplace_back(lpm_key<Key>(length, addr, generation), std::move(value));
    }
    return out;
}

}  // namespace

std::vector<std::pair<policy_lpm_key_v4, Bits>> lpm_entries_v4(const std::vector<const PrefixSet*>& fields,
                                                               uint8_t generation, size_t words) {
    return emit<policy_lpm_key_v4>(collect(fields, Family::ipv4, words), generation, words);
}

std::vector<std::pair<policy_lpm_key_v6, Bits>> lpm_entries_v6(const std::vector<const PrefixSet*>& fields,
                                                               uint8_t generation, size_t words) {
    return emit<policy_lpm_key_v6>(collect(fields, Family::ipv6, words), generation, words);
}

}  // namespace sluice::compiler
