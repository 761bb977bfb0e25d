// Writes a generation's host-inbound entries (maps/host_inbound.h) and
// zeroes its counters; made active by the runtime_cfg flip like the rest.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "compiler/compiled_host_inbound.h"

namespace sluice {

class Datapath;

Status write_host_inbound_generation(const Datapath& datapath, const CompiledHostInbound& host, uint8_t generation);

// Index into host_hits of (generation, zone, service).
inline uint32_t host_hits_index(uint8_t generation, uint16_t zone_id, uint32_t service) {
    return (uint32_t(generation) * SLUICE_MAX_ZONES + zone_id % SLUICE_MAX_ZONES) * HOST_MAX_SERVICES +
           service % HOST_MAX_SERVICES;
}

}  // namespace sluice
