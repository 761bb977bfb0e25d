#include "daemon/host_inbound_state.h"

namespace sluice {

nlohmann::json host_inbound_state_json(const CompiledHostInbound& host) {
    nlohmann::json services = nlohmann::json::array(), zones = nlohmann::json::array();
    for (const auto& s : host.services)
        services.push_back({{"id", s.id}, {"name", s.name}, {"description", s.description}});
    for (const auto& z : host.zones)
        zones.push_back({{"name", z.zone}, {"id", z.zone_id}, {"all", z.all}, {"services", z.services}});
    return {{"services", services}, {"zones", zones}};
}

}  // namespace sluice
