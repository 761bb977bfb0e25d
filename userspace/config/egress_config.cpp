#include "config/egress_config.h"

namespace sluice::config {

const EgressScope* Egress::find_scope(const std::string& name) const {
    for (const EgressScope& s : scopes)
        if (s.name == name) return &s;
    return nullptr;
}

EgressNameDecision decide_name(const EgressScope& scope, std::string_view normalized_name) {
    for (const EgressRule& rule : scope.rules)
        for (const DomainPattern& pattern : rule.names)
            if (pattern.matches(normalized_name)) return {rule.action, &rule};
    return {scope.default_action, nullptr};
}

const char* to_string(EgressAction action) { return action == EgressAction::allow ? "allow" : "deny"; }

}  // namespace sluice::config
