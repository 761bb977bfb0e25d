#include "config/egress_config.h"

namespace sluice::config {

const EgressScope* Egress::find_scope(const std::string& name) const {
    for (const EgressScope& s : scopes)
        if (s.name == name) return &s;
    return nullptr;
}

namespace {

// How specific a matching pattern is: an exact name beats every wildcard, a
// wildcard over a longer suffix beats one over a shorter.
size_t specificity(const DomainPattern& p) { return p.wildcard ? p.name.size() : SIZE_MAX; }

}  // namespace

EgressNameDecision decide_name(const EgressScope& scope, std::string_view normalized_name) {
    EgressNameDecision best{scope.default_action, nullptr};
    size_t best_specificity = 0;
    for (const EgressRule& rule : scope.rules)
        for (const DomainPattern& pattern : rule.names) {
            if (!pattern.matches(normalized_name)) continue;
            const size_t s = specificity(pattern);
            // Strictly more specific only: among equals the first rule stays.
            if (!best.rule || s > best_specificity) {
                best = {rule.action, &rule};
                best_specificity = s;
            }
        }
    return best;
}

const char* to_string(EgressAction action) { return action == EgressAction::allow ? "allow" : "deny"; }

}  // namespace sluice::config
