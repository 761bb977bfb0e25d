#include "compiler/compile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "compiler/classifier_rule.h"
#include "compiler/compile_egress.h"
#include "compiler/compile_nat.h"
#include "compiler/filters.h"
#include "compiler/host_inbound.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {
namespace {

ClassifierRule from_policy(const ResolvedRule& rule, uint32_t index) {
    ClassifierRule cr;
    cr.kind = CLASSIFIER_SCOPE_POLICY;
    cr.scope_a = rule.from_zone;
    cr.scope_b = rule.to_zone;
    cr.source = rule.source;
    cr.destination = rule.destination;
    cr.ports = rule.applications;
    cr.source_ports.any = true;
    cr.id = index;
    cr.action = static_cast<uint8_t>(rule.action);
    cr.ruleset_id = rule.ruleset_id;
    return cr;
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

// The window scale the SYN proxy offers clients: what Linux offers for its
// default buffers, so the proxy's choice rarely needs rescaling.
constexpr uint8_t kSynProxyWindowScale = 7;

// The bits n distinct values are expected to set in scan_state's 256-bit
// sets (linear counting): the datapath counts bits, not values.
uint16_t scan_threshold_bits(uint32_t distinct) {
    if (distinct == 0) return 0;
    const double m = SCAN_SET_BITS;
    const double bits = std::round(m * (1.0 - std::exp(-double(distinct) / m)));
    return static_cast<uint16_t>(std::clamp(bits, 2.0, m));
}

std::vector<zone_screen> compile_screens(const config::Config& config) {
    std::vector<zone_screen> screens(SLUICE_MAX_ZONES);
    for (size_t z = 0; z < config.zones.size() && z + 1 < SLUICE_MAX_ZONES; ++z) {
        const auto& in = config.zones[z].screen;
        zone_screen& out = screens[z + 1];
        out.syn_proxy = in.syn_proxy == config::ZoneScreen::SynProxy::always       ? SYN_PROXY_ALWAYS
                        : in.syn_proxy == config::ZoneScreen::SynProxy::above_rate ? SYN_PROXY_ABOVE_RATE
                                                                                   : SYN_PROXY_OFF;
        out.syn_proxy_wscale = kSynProxyWindowScale;
        out.syn_proxy_rate = in.syn_proxy_rate;
        out.source_sessions = in.source_sessions;
        out.source_rate = in.source_rate;
        out.destination_rate = in.destination_rate;
        out.source_icmp_rate = in.source_icmp_rate;
        out.source_udp_rate = in.source_udp_rate;
        out.destination_icmp_rate = in.destination_icmp_rate;
        out.destination_udp_rate = in.destination_udp_rate;
        out.scan_port_bits = scan_threshold_bits(in.scan_ports);
        out.scan_host_bits = scan_threshold_bits(in.scan_hosts);
        out.scan_block = in.scan_block ? 1 : 0;
        out.scan_window_s = static_cast<uint32_t>(in.scan_window.count());
        out.scan_hold_s = static_cast<uint32_t>(in.scan_hold.count());
    }
    return screens;
}

// An error without a position of its own points at the section being
// compiled: a capacity limit concerns the section as a whole.
Error in_section(const config::Config& config, Error error, const std::string& section) {
    if (error.where) return error;
    const auto it = config.section_locations.find(section);
    const config::Location at = it == config.section_locations.end() ? config::Location{} : it->second;
    if (error.code == ErrorCode::Failed) error.code = ErrorCode::InvalidConfig;
    error.where = ErrorLocation{config.file, at.line, at.column, section};
    return error;
}

}  // namespace

Result<CompiledConfig> compile(const config::Config& config, uint8_t generation, ClassifierGrouping grouping) {
    if (generation >= POLICY_GENERATIONS) return make_error("policy generation must be 0 or 1");
    auto resolved = resolve_rules(config);
    if (!resolved) return in_section(config, resolved.error(), "policies");
    const std::vector<ResolvedRule>& rules = resolved.value();

    CompiledConfig out;
    for (size_t i = 0; i < config.zones.size(); ++i)
        out.zones.push_back({config.zones[i].name, static_cast<uint16_t>(i + 1), config.zones[i].screen.scan_ports,
                             config.zones[i].screen.scan_hosts});
    for (const auto& iface : config.interfaces) {
        uint16_t zone = zone_id(config, iface.zone.name);
        if (!zone)
            return in_section(config, make_error("interface \"" + iface.name + "\": unknown zone \"" + iface.zone.name + "\""),
                              "interfaces");
        std::string where = config.file + ":" + std::to_string(iface.location.line) + ":" +
                            std::to_string(iface.location.column) + ": interfaces." + iface.name;
        uint16_t filter = iface.filter ? filter_id(config, iface.filter->name) : 0;
        if (iface.filter && !filter)
            return in_section(config,
                              make_error("interface \"" + iface.name + "\": unknown filter \"" + iface.filter->name + "\""),
                              "interfaces");
        const config::HaGroup* group = config.ha.group_of_interface(iface.name);
        out.interfaces.push_back({iface.name, iface.parent, iface.vlan_id, zone, filter, iface.xdp_mode, where,
                                  static_cast<uint8_t>(group ? group->id : 0)});
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

    auto filters = resolve_filters(config);
    if (!filters) return in_section(config, filters.error(), "filters");
    out.filters = std::move(filters.value().filters);
    std::vector<ClassifierRule> classifier_rules;
    classifier_rules.reserve(rules.size() + filters.value().rules.size());
    for (uint32_t i = 0; i < rules.size(); ++i) {
        classifier_rules.push_back(from_policy(rules[i], i));
        const auto& p = config.policies[i];
        classifier_rules.back().where = "policies[" + std::to_string(i) + "] \"" + p.name + "\"";
        classifier_rules.back().at = ErrorLocation{config.file, p.location.line, p.location.column, ""};
    }
    for (auto& rule : filters.value().rules) classifier_rules.push_back(std::move(rule));
    auto tables = compile_classifier(classifier_rules, generation, grouping);
    if (!tables) return in_section(config, tables.error(), config.policies.empty() ? "filters" : "policies");
    out.tables = std::move(tables.value());

    auto nat = compile_nat(config, generation);
    if (!nat) return in_section(config, nat.error(), "nat");
    out.nat = std::move(nat.value());

    auto host = compile_host_inbound(config, generation);
    if (!host) return in_section(config, host.error(), "zones");
    out.host_inbound = std::move(host.value());

    auto egress = compile_egress(config);
    if (!egress) return in_section(config, egress.error(), "egress");
    out.egress = std::move(egress.value());

    out.screens = compile_screens(config);
    out.default_action = to_policy_action(config.default_action);
    out.timeout_ns = compile_timeouts(config.timeouts);

    // The rate limit is per CPU, a GCRA (maps/observe.h): one event every
    // interval, `burst` of them back to back.
    out.default_log = config.default_log;
    out.flow_log = config.default_log != 0;
    for (const auto& p : config.policies) {
        out.policy_log.push_back(p.log);
        out.flow_log = out.flow_log || p.log != 0;
    }
    if (config.flow_log.rate_limit) {
        out.flow_log_interval_ns = 1'000'000'000ull / config.flow_log.rate_limit;
        if (out.flow_log_interval_ns == 0) out.flow_log_interval_ns = 1;
        out.flow_log_tolerance_ns = uint64_t(config.flow_log.burst - 1) * out.flow_log_interval_ns;
    }
    return out;
}

}  // namespace sluice::compiler
