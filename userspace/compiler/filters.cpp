#include "compiler/filters.h"

namespace sluice::compiler {
namespace {

const char* action_name(config::FilterAction action) {
    switch (action) {
    case config::FilterAction::accept: return "accept";
    case config::FilterAction::drop: return "drop";
    case config::FilterAction::count: return "count";
    }
    return "accept";
}

policy_proto_slot slot_of(uint8_t protocol) {
    switch (protocol) {
    case config::kProtoTcp: return POLICY_PROTO_TCP;
    case config::kProtoUdp: return POLICY_PROTO_UDP;
    case config::kProtoIcmp: return POLICY_PROTO_ICMP;
    case config::kProtoIcmpv6: return POLICY_PROTO_ICMPV6;
    default: return POLICY_PROTO_OTHER;
    }
}

// `protocol` alone: every packet of it (all ports, all ICMP types; for other
// protocols the slot's "port" is the protocol number). With ports: those.
AppSet ports_of(const std::optional<uint8_t>& protocol, const std::vector<config::PortRange>& ports) {
    AppSet set;
    if (!protocol) {
        set.any = true;
        return set;
    }
    const policy_proto_slot slot = slot_of(*protocol);
    if (slot == POLICY_PROTO_OTHER) set.ranges.push_back({slot, *protocol, *protocol});
    else if (ports.empty()) set.ranges.push_back({slot, 0, 65535});
    for (const auto& r : ports) set.ranges.push_back({slot, r.lo, r.hi});
    return set;
}

AppSet source_ports_of(const std::optional<uint8_t>& protocol, const std::vector<config::PortRange>& ports) {
    if (ports.empty()) {
        AppSet any;
        any.any = true;
        return any;
    }
    return ports_of(protocol, ports);
}

}  // namespace

uint16_t filter_id(const config::Config& config, const std::string& name) {
    for (size_t i = 0; i < config.filters.size(); ++i)
        if (config.filters[i].name == name) return static_cast<uint16_t>(i + 1);
    return 0;
}

Result<ResolvedFilters> resolve_filters(const config::Config& config) {
    ResolvedFilters out;
    uint32_t slot = 0;
    for (size_t f = 0; f < config.filters.size(); ++f) {
        const config::Filter& filter = config.filters[f];
        CompiledFilter compiled{filter.name, static_cast<uint16_t>(f + 1), {}, {}};
        for (const auto& iface : config.interfaces)
            if (iface.filter && iface.filter->name == filter.name) compiled.interfaces.push_back(iface.name);
        for (const config::FilterRule& rule : filter.rules) {
            if (slot >= FILTER_MAX_RULES)
                return make_error("too many filter rules (at most " + std::to_string(FILTER_MAX_RULES) +
                                  " in all filters together)");
            ClassifierRule cr;
            cr.kind = CLASSIFIER_SCOPE_FILTER;
            cr.scope_a = compiled.id;
            auto source = resolve_addresses(config, rule.source);
            if (!source) return make_error("filter " + filter.name + " rule \"" + rule.name + "\": " + source.error().message);
            auto destination = resolve_addresses(config, rule.destination);
            if (!destination)
                return make_error("filter " + filter.name + " rule \"" + rule.name + "\": " + destination.error().message);
            cr.source = std::move(source.value());
            cr.destination = std::move(destination.value());
            cr.ports = ports_of(rule.protocol, rule.destination_ports);
            cr.source_ports = source_ports_of(rule.protocol, rule.source_ports);
            cr.decides = rule.action != config::FilterAction::count;
            cr.counted = true;
            cr.id = slot;
            cr.action = rule.action == config::FilterAction::drop ? FILTER_ACTION_DROP : FILTER_ACTION_ACCEPT;
            cr.where = "filters." + filter.name + "[" + std::to_string(compiled.rules.size()) + "] \"" + rule.name + "\"";
            cr.at = ErrorLocation{config.file, rule.location.line, rule.location.column, ""};
            out.rules.push_back(std::move(cr));
            compiled.rules.push_back({rule.name, action_name(rule.action), slot});
            ++slot;
        }
        out.filters.push_back(std::move(compiled));
    }
    return out;
}

}  // namespace sluice::compiler
