#include "config/host_services.h"

namespace sluice::config {
namespace {

HostServiceMatch tcp(uint16_t lo, uint16_t hi) { return {kProtoTcp, {{lo, hi}}}; }
HostServiceMatch tcp(uint16_t port) { return tcp(port, port); }
HostServiceMatch udp(uint16_t lo, uint16_t hi) { return {kProtoUdp, {{lo, hi}}}; }
HostServiceMatch udp(uint16_t port) { return udp(port, port); }
HostServiceMatch icmp_type(uint8_t protocol, uint8_t type) { return {protocol, {{type, type}}}; }

}  // namespace

const std::vector<NamedHostService>& named_host_services() {
    // Echo request types: ICMP 8, ICMPv6 128. The traceroute range is the one
    // traceroute(8) and mtr probe by default (33434 + 100 hops).
    static const std::vector<NamedHostService> services = {
        {"ping", "ICMP echo request (type 8) and ICMPv6 echo request (128)",
         {icmp_type(kProtoIcmp, 8), icmp_type(kProtoIcmpv6, 128)}},
        {"ssh", "TCP 22", {tcp(22)}},
        {"dns", "UDP and TCP 53", {udp(53), tcp(53)}},
        {"dhcp", "DHCP server and client: UDP 67, 68; DHCPv6: UDP 546, 547", {udp(67, 68), udp(546, 547)}},
        {"ntp", "UDP 123", {udp(123)}},
        {"bgp", "TCP 179", {tcp(179)}},
        {"http", "TCP 80", {tcp(80)}},
        {"https", "TCP 443", {tcp(443)}},
        {"traceroute", "UDP 33434-33534 (the firewall answers port unreachable)", {udp(33434, 33534)}},
        // Its port is the config's (metrics.listen): the compiler fills it in.
        {kHostServiceMetrics, "TCP to the /metrics endpoint (metrics.listen's port)", {}},
    };
    return services;
}

const NamedHostService* find_named_host_service(const std::string& name) {
    for (const auto& s : named_host_services())
        if (s.name == name) return &s;
    return nullptr;
}

std::vector<std::string> host_service_names() {
    std::vector<std::string> names;
    for (const auto& s : named_host_services()) names.push_back(s.name);
    names.push_back(kHostInboundAll);
    return names;
}

}  // namespace sluice::config
