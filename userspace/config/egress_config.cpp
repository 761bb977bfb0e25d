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

bool same_rule(const EgressRule& a, const EgressRule& b) {
    return a.action == b.action && a.names == b.names && a.addresses == b.addresses && a.ports == b.ports;
}

std::string rule_text(const EgressRule& rule) {
    auto list = [](const std::vector<std::string>& items) {
        if (items.size() == 1) return items.front();
        std::string out = "[";
        for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
        return out + "]";
    };
    std::vector<std::string> what;
    for (const auto& n : rule.names) what.push_back("\"" + n.to_string() + "\"");
    for (const auto& p : rule.addresses) what.push_back("\"" + p.to_string() + "\"");
    std::string out = std::string("{ action: ") + to_string(rule.action) + ", " +
                      (rule.names.empty() ? "address: " : "name: ") + list(what);
    if (!rule.ports.empty()) {
        std::vector<std::string> ports;
        for (const auto& p : rule.ports)
            ports.push_back(p.lo == p.hi ? std::to_string(p.lo) : std::to_string(p.lo) + "-" + std::to_string(p.hi));
        out += ", destination-port: " + list(ports);
    }
    return out + " }";
}

}  // namespace sluice::config
