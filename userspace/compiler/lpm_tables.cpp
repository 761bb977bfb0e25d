#include "compiler/lpm_tables.h"

#include <cstring>
#include <map>
#include <set>

#include "compiler/bitset.h"

namespace sluice::compiler {
namespace {

using config::Family;
using PrefixKey = std::pair<int, std::array<uint8_t, 16>>;  // (length, masked address)

// The rules that list each prefix directly, for one family and field.
struct DirectPrefixes {
    std::map<PrefixKey, Bits> rules_by_prefix;
    std::set<int> lengths;
};

DirectPrefixes collect(const std::vector<ResolvedRule>& rules, AddressField field, Family family,
                       size_t words) {
    DirectPrefixes direct;
    auto add = [&](int length, const std::array<uint8_t, 16>& addr, uint32_t rule) {
        auto [it, inserted] = direct.rules_by_prefix.try_emplace(PrefixKey{length, addr}, Bits(words));
        set_bit(it->second, rule);
        direct.lengths.insert(length);
    };
    // /0 is always present so every address finds an entry (possibly empty).
    direct.rules_by_prefix.try_emplace(PrefixKey{0, {}}, Bits(words));
    direct.lengths.insert(0);
    for (uint32_t i = 0; i < rules.size(); ++i) {
        const PrefixSet& set = field == AddressField::source ? rules[i].source : rules[i].destination;
        if (set.any) add(0, {}, i);
        for (const auto& prefix : set.prefixes)
            if (prefix.family == family) add(prefix.length, prefix.addr, i);
    }
    return direct;
}

template <typename Key, size_t AddrBytes>
void emit(const DirectPrefixes& direct, uint8_t generation, size_t words,
          std::vector<std::pair<Key, PolicyBitset>>& out) {
    out.clear();
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
        Key key;
        std::memset(&key, 0, sizeof key);
        key.prefixlen = static_cast<__u32>(8 + length);  // the generation byte counts
        key.generation = generation;
        std::memcpy(key.addr, addr.data(), AddrBytes);
        out.emplace_back(key, to_map_value(value));
    }
}

}  // namespace

void build_lpm_tables(const std::vector<ResolvedRule>& rules, AddressField field,
                      CompiledPolicyTables& tables) {
    const size_t words = tables.words;
    const bool source = field == AddressField::source;
    emit<policy_lpm_key_v4, 4>(collect(rules, field, Family::ipv4, words), tables.generation, words,
                               source ? tables.src_v4 : tables.dst_v4);
    emit<policy_lpm_key_v6, 16>(collect(rules, field, Family::ipv6, words), tables.generation, words,
                                source ? tables.src_v6 : tables.dst_v6);
}

}  // namespace sluice::compiler
