#include "compiler/resolved_rule.h"

namespace sluice::compiler {
namespace {

Result<AppSet> resolve_applications(const config::Config& config, const config::Policy& policy) {
    AppSet set;
    set.any = policy.any_application;
    for (const auto& ref : policy.applications) {
        const config::Application* app = config.find_application(ref.name);
        if (!app) return make_error("unknown application \"" + ref.name + "\"");
        switch (app->protocol) {
        case config::kProtoTcp:
        case config::kProtoUdp: {
            auto slot = app->protocol == config::kProtoTcp ? POLICY_PROTO_TCP : POLICY_PROTO_UDP;
            if (app->destination_ports.empty()) set.ranges.push_back({slot, 0, 65535});
            for (const auto& r : app->destination_ports) set.ranges.push_back({slot, r.lo, r.hi});
            break;
        }
        case config::kProtoIcmp:
            set.ranges.push_back({POLICY_PROTO_ICMP, kIcmpEchoRequest, kIcmpEchoRequest});
            set.ranges.push_back({POLICY_PROTO_ICMPV6, kIcmpv6EchoRequest, kIcmpv6EchoRequest});
            break;
        case config::kProtoIcmpv6:
            set.ranges.push_back({POLICY_PROTO_ICMPV6, kIcmpv6EchoRequest, kIcmpv6EchoRequest});
            break;
        default:
            // The parser refuses other protocols: slot OTHER cannot tell them apart.
            return make_error("application \"" + ref.name + "\": protocol " +
                              std::to_string(app->protocol) + " is not supported by the classifier");
        }
    }
    return set;
}

}  // namespace

Result<PrefixSet> resolve_addresses(const config::Config& config, const config::AddressMatch& match) {
    PrefixSet set;
    set.any = match.any;
    for (const auto& item : match.items) {
        if (item.prefix) {
            set.prefixes.push_back(*item.prefix);
            continue;
        }
        const config::AddressBookEntry* entry = config.find_address(item.text);
        if (!entry) return make_error("unknown address-book entry \"" + item.text + "\"");
        set.prefixes.insert(set.prefixes.end(), entry->prefixes.begin(), entry->prefixes.end());
    }
    return set;
}

uint16_t zone_id(const config::Config& config, const std::string& name) {
    for (size_t i = 0; i < config.zones.size(); ++i)
        if (config.zones[i].name == name) return static_cast<uint16_t>(i + 1);
    return 0;
}

policy_action to_policy_action(config::PolicyAction action) {
    switch (action) {
    case config::PolicyAction::permit: return POLICY_ACTION_PERMIT;
    case config::PolicyAction::reject: return POLICY_ACTION_REJECT;
    case config::PolicyAction::inspect: return POLICY_ACTION_INSPECT;
    case config::PolicyAction::deny: break;
    }
    return POLICY_ACTION_DENY;
}

Result<std::vector<ResolvedRule>> resolve_rules(const config::Config& config) {
    std::vector<ResolvedRule> rules;
    rules.reserve(config.policies.size());
    for (const auto& policy : config.policies) {
        ResolvedRule rule;
        rule.from_zone = zone_id(config, policy.from.name);
        rule.to_zone = zone_id(config, policy.to.name);
        if (!rule.from_zone || !rule.to_zone)
            return make_error("policy \"" + policy.name + "\": unknown zone");
        auto source = resolve_addresses(config, policy.source);
        if (!source) return make_error("policy \"" + policy.name + "\": " + source.error().message);
        auto destination = resolve_addresses(config, policy.destination);
        if (!destination) return make_error("policy \"" + policy.name + "\": " + destination.error().message);
        auto apps = resolve_applications(config, policy);
        if (!apps) return make_error("policy \"" + policy.name + "\": " + apps.error().message);
        rule.source = std::move(source.value());
        rule.destination = std::move(destination.value());
        rule.applications = std::move(apps.value());
        rule.action = to_policy_action(policy.action);
        if (policy.action == config::PolicyAction::inspect) {
            rule.ruleset_id = config.ruleset_id(policy.ruleset.name);
            if (!rule.ruleset_id)
                return make_error("policy \"" + policy.name + "\": unknown ruleset \"" + policy.ruleset.name + "\"");
        }
        rules.push_back(std::move(rule));
    }
    return rules;
}

}  // namespace sluice::compiler
