// The host-inbound entries of one generation (maps/host_inbound.h), as the
// compiler emits them and the loader writes them, with the names `show
// host-inbound` prints for each service id.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

struct CompiledHostService {
    uint32_t id = 0;           // counter index, < HOST_MAX_SERVICES
    std::string name;          // "ssh", "tcp/8080", or a built-in ("reply", ...)
    std::string description;
};

struct CompiledHostZone {
    std::string zone;
    uint16_t zone_id = 0;
    bool all = false;                 // `host-inbound: [all]`
    std::vector<uint32_t> services;   // allowed service ids, config order
};

struct CompiledHostInbound {
    uint8_t generation = 0;
    std::vector<CompiledHostService> services;   // every id in use, by id
    std::vector<CompiledHostZone> zones;         // every zone, by id
    std::vector<std::pair<host_service_key, host_service_value>> entries;
};

}  // namespace sluice
