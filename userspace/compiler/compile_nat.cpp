// nat.destination (exact-match map) and nat.static / nat.nptv6 (prefix maps),
// and the assembly of every NAT table of a generation.
#include "compiler/compile_nat.h"

#include <arpa/inet.h>

#include <cstring>

#include "compiler/lpm_tables.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {
namespace {

using config::Family;

__u8 family_of(const config::Prefix& prefix) {
    return prefix.family == Family::ipv4 ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
}

Status compile_destination(const config::Config& config, CompiledNat& out) {
    const auto& rules = config.nat.destination;
    if (rules.size() > NAT_MAX_DESTINATION_RULES) return make_error("too many NAT destination rules");
    for (uint32_t i = 0; i < rules.size(); ++i) {
        const config::DestinationNatRule& rule = rules[i];
        nat_dst_key key;
        std::memset(&key, 0, sizeof key);
        std::memcpy(key.addr, rule.destination.addr.data(), sizeof key.addr);
        key.port = htons(rule.port.value_or(0));
        key.zone_in = zone_id(config, rule.from.name);
        key.protocol = rule.protocol.value_or(0);
        key.family = family_of(rule.destination);
        key.generation = out.generation;
        if (!key.zone_in) return make_error("NAT destination rule \"" + rule.name + "\": unknown zone");
        nat_dst_value value;
        std::memset(&value, 0, sizeof value);
        std::memcpy(value.addr, rule.translate_address.addr.data(), sizeof value.addr);
        value.port = htons(rule.translate_port.value_or(0));
        value.rule_id = i;
        out.destination.emplace_back(key, value);
    }
    return {};
}

// `from` is replaced by `to`; the entry is keyed by `from`.
nat_prefix_value prefix_value(const config::Prefix& from, const config::Prefix& to, nat_prefix_kind kind,
                              uint32_t rule_id) {
    nat_prefix_value value;
    std::memset(&value, 0, sizeof value);
    std::memcpy(value.from, from.addr.data(), sizeof value.from);
    std::memcpy(value.to, to.addr.data(), sizeof value.to);
    value.prefix_len = from.length;
    value.kind = static_cast<__u8>(kind);
    value.rule_id = rule_id;
    return value;
}

// nat_map_in_* is keyed by `outside` (destinations arriving from outside),
// nat_map_out_* by `inside` (sources leaving).
void compile_prefix_rules(const std::vector<config::PrefixNatRule>& rules, nat_prefix_kind kind, CompiledNat& out) {
    const uint8_t gen = out.generation;
    for (uint32_t i = 0; i < rules.size(); ++i) {
        const config::Prefix& inside = rules[i].inside;
        const config::Prefix& outside = rules[i].outside;
        nat_prefix_value in = prefix_value(outside, inside, kind, i);
        nat_prefix_value leaving = prefix_value(inside, outside, kind, i);
        if (inside.family == Family::ipv4) {
            out.map_in_v4.emplace_back(lpm_key<policy_lpm_key_v4>(outside.length, outside.addr, gen), in);
            out.map_out_v4.emplace_back(lpm_key<policy_lpm_key_v4>(inside.length, inside.addr, gen), leaving);
        } else {
            out.map_in_v6.emplace_back(lpm_key<policy_lpm_key_v6>(outside.length, outside.addr, gen), in);
            out.map_out_v6.emplace_back(lpm_key<policy_lpm_key_v6>(inside.length, inside.addr, gen), leaving);
        }
    }
}

}  // namespace

Result<CompiledNat> compile_nat(const config::Config& config, uint8_t generation) {
    if (generation >= NAT_GENERATIONS) return make_error("NAT generation must be 0 or 1");
    const config::Nat& nat = config.nat;
    if (nat.static_rules.size() + nat.nptv6.size() > NAT_MAX_PREFIX_RULES)
        return make_error("too many NAT static and nptv6 rules");
    CompiledNat out;
    out.generation = generation;
    if (auto s = compile_destination(config, out); !s) return s.error();
    compile_prefix_rules(nat.static_rules, NAT_PREFIX_STATIC, out);
    compile_prefix_rules(nat.nptv6, NAT_PREFIX_NPTV6, out);
    if (auto s = compile_source_nat(config, out); !s) return s.error();
    auto pools = compile_nat_pools(nat);
    if (!pools) return pools.error();
    out.pools = std::move(pools.value());
    return out;
}

}  // namespace sluice::compiler
