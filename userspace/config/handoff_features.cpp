#include "config/handoff_features.h"

namespace sluice::config {

std::string first_handoff_user(const Config& config) {
    for (const Policy& p : config.policies)
        if (p.action == PolicyAction::inspect) return "policy " + p.name + " (inspect)";
    for (const Zone& z : config.zones)
        if (z.screen.syn_proxy != ZoneScreen::SynProxy::off) return "zone " + z.name + " (syn-proxy)";
    if (config.egress.enabled && !config.egress.scopes.empty()) return "egress (DNS steered to the proxy)";
    return "";
}

}  // namespace sluice::config
