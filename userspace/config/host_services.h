// The services `host-inbound` can name (docs/host-protection.md): what each
// one lets the firewall answer. One table, read by the parser (which names
// exist) and the compiler (what they match).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/values.h"

namespace sluice::config {

// One (protocol, what) a service matches: TCP/UDP destination ports, or one
// ICMP/ICMPv6 type (ports.lo), or a whole other protocol (ports empty).
struct HostServiceMatch {
    uint8_t protocol = 0;
    std::vector<PortRange> ports;
};

struct NamedHostService {
    std::string name;
    std::string description;
    std::vector<HostServiceMatch> matches;
};

// In a fixed order: their counter ids follow it.
const std::vector<NamedHostService>& named_host_services();
const NamedHostService* find_named_host_service(const std::string& name);
std::vector<std::string> host_service_names();   // every name, plus "all"

inline constexpr const char* kHostInboundAll = "all";
inline constexpr const char* kHostServiceMetrics = "metrics";

}  // namespace sluice::config
