#include "loader/host_inbound_tables.h"

#include <cstddef>

#include "loader/datapath.h"
#include "loader/map_io.h"

namespace sluice {

Status write_host_inbound_generation(const Datapath& datapath, const CompiledHostInbound& host, uint8_t generation) {
    if (host.generation != generation) return make_error("internal: host-inbound compiled for another generation");
    const int services = datapath.map_fd(SLUICE_MAP_HOST_SERVICES);
    if (auto s = delete_generation(services, SLUICE_MAP_HOST_SERVICES, generation,
                                   offsetof(host_service_key, generation));
        !s)
        return s;
    if (auto s = write_entries(services, SLUICE_MAP_HOST_SERVICES, host.entries); !s) return s;
    return zero_percpu(datapath.map_fd(SLUICE_MAP_HOST_HITS), SLUICE_MAP_HOST_HITS,
                       host_hits_index(generation, 0, 0), SLUICE_MAX_ZONES * HOST_MAX_SERVICES,
                       sizeof(host_inbound_counter));
}

}  // namespace sluice
