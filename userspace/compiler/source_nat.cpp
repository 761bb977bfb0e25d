// nat.source → the source-NAT classifier: the policy classifier's structure
// (zone pair ∧ LPM(source) ∧ LPM(destination), lowest bit wins) over at most
// 64 rules, so every bitset is one word. A rule is left out of the tables of
// a family it cannot translate (a pool without addresses of that family), so
// such flows fall through to the next rule instead of failing.
#include <cstring>

#include "compiler/compile_nat.h"
#include "compiler/lpm_tables.h"
#include "compiler/resolved_rule.h"
#include "compiler/zone_pairs.h"

namespace sluice::compiler {
namespace {

constexpr size_t kWords = 1;  // NAT_MAX_SOURCE_RULES = 64 bits

template <typename Key>
std::vector<std::pair<Key, nat_rule_bits>> to_rule_bits(const std::vector<std::pair<Key, Bits>>& entries) {
    std::vector<std::pair<Key, nat_rule_bits>> out;
    out.reserve(entries.size());
    for (const auto& [key, bits] : entries) out.emplace_back(key, nat_rule_bits{bits[0]});
    return out;
}

struct Translation {
    nat_source_rule rule;
    bool ipv4 = false, ipv6 = false;  // families it can translate
};

Result<Translation> translation_of(const config::Config& config, const config::SourceNatRule& rule, uint32_t index) {
    Translation t;
    std::memset(&t.rule, 0, sizeof t.rule);
    t.rule.rule_id = index;
    if (rule.translate_interface) {
        t.rule.kind = NAT_SOURCE_INTERFACE;
        t.ipv4 = t.ipv6 = true;
        return t;
    }
    const auto& pools = config.nat.pools;
    for (size_t p = 0; rule.pool && p < pools.size(); ++p) {
        if (pools[p].name != rule.pool->name) continue;
        t.rule.kind = NAT_SOURCE_POOL;
        t.rule.pool_index = static_cast<__u16>(p);
        for (const auto& range : pools[p].addresses)
            (range.first.family == config::Family::ipv4 ? t.ipv4 : t.ipv6) = true;
        return t;
    }
    return make_error("NAT source rule \"" + rule.name + "\": no translation or unknown pool");
}

}  // namespace

Status compile_source_nat(const config::Config& config, CompiledNat& out) {
    const auto& rules = config.nat.source;
    if (rules.size() > NAT_MAX_SOURCE_RULES) return make_error("too many NAT source rules");
    std::vector<ZonePair> zones;
    std::vector<PrefixSet> sources, destinations;
    std::vector<Translation> translations;
    for (uint32_t i = 0; i < rules.size(); ++i) {
        const config::SourceNatRule& rule = rules[i];
        ZonePair pair{zone_id(config, rule.from.name), zone_id(config, rule.to.name)};
        if (!pair.first || !pair.second) return make_error("NAT source rule \"" + rule.name + "\": unknown zone");
        auto source = resolve_addresses(config, rule.source);
        auto destination = resolve_addresses(config, rule.destination);
        auto translation = translation_of(config, rule, i);
        if (!source || !destination) return make_error("NAT source rule \"" + rule.name + "\": unknown address");
        if (!translation) return translation.error();
        zones.push_back(pair);
        sources.push_back(std::move(source.value()));
        destinations.push_back(std::move(destination.value()));
        translations.push_back(translation.value());
    }

    out.source_rules.assign(NAT_MAX_SOURCE_RULES, nat_source_rule{});
    for (size_t i = 0; i < translations.size(); ++i) out.source_rules[i] = translations[i].rule;
    // Without rules the tables stay empty (rather than a /0 with no bits):
    // a config without source NAT leaves nothing in these maps.
    if (rules.empty()) return {};

    // Per family, the fields of the rules that take part in it.
    std::vector<const PrefixSet*> s4, s6, d4, d6;
    for (size_t i = 0; i < rules.size(); ++i) {
        s4.push_back(translations[i].ipv4 ? &sources[i] : nullptr);
        d4.push_back(translations[i].ipv4 ? &destinations[i] : nullptr);
        s6.push_back(translations[i].ipv6 ? &sources[i] : nullptr);
        d6.push_back(translations[i].ipv6 ? &destinations[i] : nullptr);
    }
    const uint8_t gen = out.generation;
    out.source_zones = to_rule_bits(zone_pair_entries(zones, gen, kWords));
    out.source_saddr_v4 = to_rule_bits(lpm_entries_v4(s4, gen, kWords));
    out.source_daddr_v4 = to_rule_bits(lpm_entries_v4(d4, gen, kWords));
    out.source_saddr_v6 = to_rule_bits(lpm_entries_v6(s6, gen, kWords));
    out.source_daddr_v6 = to_rule_bits(lpm_entries_v6(d6, gen, kWords));
    return {};
}

}  // namespace sluice::compiler
