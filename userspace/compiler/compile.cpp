#include "compiler/compile.h"

#include <chrono>
#include <cstring>
#include <map>

#include "compiler/bitset.h"
#include "compiler/compile_nat.h"
#include "compiler/lpm_tables.h"
#include "compiler/port_classes.h"
#include "compiler/resolved_rule.h"
#include "compiler/zone_pairs.h"

namespace sluice::compiler {
namespace {

void compile_zone_pairs(const std::vector<ResolvedRule>& rules, CompiledPolicyTables& tables) {
    std::vector<ZonePair> rule_zones;
    for (const ResolvedRule& rule : rules) rule_zones.emplace_back(rule.from_zone, rule.to_zone);
    for (const auto& [key, bits] : zone_pair_entries(rule_zones, tables.generation, tables.words))
        tables.zone_pairs.emplace_back(key, to_map_value(bits));
}

uint64_t to_ns(std::chrono::seconds s) {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(s).count());
}

std::array<uint64_t, TIMEOUT_CLASS_COUNT> compile_timeouts(const config::Timeouts& t) {
    std::array<uint64_t, TIMEOUT_CLASS_COUNT> ns{};
    ns[TIMEOUT_TCP_SYN] = to_ns(t.tcp_syn);
    ns[TIMEOUT_TCP_ESTABLISHED] = to_ns(t.tcp_established);
    ns[TIMEOUT_TCP_CLOSING] = to_ns(t.tcp_closing);
    ns[TIMEOUT_TCP_TIME_WAIT] = to_ns(t.tcp_time_wait);
    ns[TIMEOUT_UDP] = to_ns(t.udp);
    ns[TIMEOUT_ICMP] = to_ns(t.icmp);
    ns[TIMEOUT_OTHER] = to_ns(t.other);
    ns[TIMEOUT_FRAGMENT] = to_ns(t.fragment);
    return ns;
}

}  // namespace

Result<CompiledConfig> compile(const config::Config& config, uint8_t generation) {
    if (generation >= POLICY_GENERATIONS) return make_error("policy generation must be 0 or 1");
    if (config.policies.size() > POLICY_MAX_RULES)
        return make_error("too many policies (at most " + std::to_string(POLICY_MAX_RULES) + ")");
    auto resolved = resolve_rules(config);
    if (!resolved) return resolved.error();
    const std::vector<ResolvedRule>& rules = resolved.value();

    CompiledConfig out;
    for (size_t i = 0; i < config.zones.size(); ++i)
        out.zones.push_back({config.zones[i].name, static_cast<uint16_t>(i + 1)});
    for (const auto& iface : config.interfaces) {
        uint16_t zone = zone_id(config, iface.zone.name);
        if (!zone) return make_error("interface \"" + iface.name + "\": unknown zone \"" + iface.zone.name + "\"");
        std::string where = config.file + ":" + std::to_string(iface.location.line) + ":" +
                            std::to_string(iface.location.column) + ": interfaces." + iface.name;
        out.interfaces.push_back({iface.name, iface.parent, iface.vlan_id, zone, iface.xdp_mode, where});
    }
    for (size_t i = 0; i < config.policies.size(); ++i) {
        const auto& p = config.policies[i];
        CompiledPolicy cp{p.name, static_cast<uint32_t>(i), p.from.name, p.to.name, to_policy_action(p.action),
                          p.action == config::PolicyAction::inspect ? p.ruleset.name : "", {}, {}, {}};
        if (!p.source.any)
            for (const auto& item : p.source.items) cp.sources.push_back(item.text);
        if (!p.destination.any)
            for (const auto& item : p.destination.items) cp.destinations.push_back(item.text);
        if (!p.any_application)
            for (const auto& app : p.applications) cp.applications.push_back(app.name);
        out.policies.push_back(std::move(cp));
    }

    CompiledPolicyTables& tables = out.tables;
    tables.generation = generation;
    tables.words = static_cast<uint16_t>(std::max<size_t>(1, (rules.size() + 63) / 64));
    compile_zone_pairs(rules, tables);
    build_lpm_tables(rules, AddressField::source, tables);
    build_lpm_tables(rules, AddressField::destination, tables);
    build_port_classes(rules, tables);
    for (uint32_t i = 0; i < rules.size(); ++i) {
        policy_rule rule;
        std::memset(&rule, 0, sizeof rule);
        rule.policy_id = i;
        rule.action = static_cast<__u8>(rules[i].action);
        rule.ruleset_id = rules[i].ruleset_id;
        tables.rules.push_back(rule);
    }

    auto nat = compile_nat(config, generation);
    if (!nat) return nat.error();
    out.nat = std::move(nat.value());

    out.default_action = to_policy_action(config.default_action);
    out.timeout_ns = compile_timeouts(config.timeouts);
    return out;
}

}  // namespace sluice::compiler
