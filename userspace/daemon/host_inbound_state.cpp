#include "daemon/host_inbound_state.h"

namespace sluice {

state::HostInbound host_inbound_state(const CompiledHostInbound& host) {
    state::HostInbound out;
    for (const auto& s : host.services) out.services.push_back({s.id, s.name, s.description});
    for (const auto& z : host.zones)
        out.zones.push_back({z.zone, z.zone_id, z.all, std::vector<uint32_t>(z.services.begin(), z.services.end())});
    return out;
}

}  // namespace sluice
