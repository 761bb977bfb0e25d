// Zones' `host-inbound` lists → host_services entries (maps/host_inbound.h):
// per zone, every (protocol, port or ICMP type) it allows; in the catalog
// (zone 0), what every known service matches, so drops count by name.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "compiler/compiled_host_inbound.h"
#include "config/config.h"

namespace sluice::compiler {

Result<CompiledHostInbound> compile_host_inbound(const config::Config& config, uint8_t generation);

// "tcp/8080", "udp/5000-5010,6000", "icmp/type-13", "protocol-89".
std::string host_entry_name(const config::HostServiceMatch& match);

}  // namespace sluice::compiler
