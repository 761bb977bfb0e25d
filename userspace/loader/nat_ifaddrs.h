// The addresses source NAT to an interface translates to (pinned map
// nat_ifaddrs: ifindex → struct nat_ifaddr, maps/nat.h). Live state, not
// config: the daemon writes it after applying a config and again whenever the
// netlink watcher sees an address come or go.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/result.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

// One address as the kernel lists it (RTM_GETADDR), in the kernel's order.
struct InterfaceAddress {
    uint32_t ifindex = 0;
    int family = 0;            // AF_INET | AF_INET6
    int scope = 0;             // RT_SCOPE_*
    uint32_t flags = 0;        // IFA_F_*
    uint8_t addr[16] = {};     // network order; IPv4 in the first 4 bytes
};

using NatIfaddrEntry = std::pair<uint32_t, nat_ifaddr>;

// Ports handed out on an interface address (the range below 1024 stays with
// the firewall's own services).
inline constexpr uint16_t kIfaddrPortFirst = 1024;
inline constexpr uint16_t kIfaddrPortLast = 65535;

// The entry for one interface: its first usable IPv4 address and its first
// global-scope IPv6 address (never link-local, tentative, deprecated or
// failed duplicate detection, which cannot carry translated flows).
nat_ifaddr choose_nat_ifaddr(uint32_t ifindex, const std::vector<InterfaceAddress>& addresses);

// Every address in this network namespace (libnl rtnl_addr cache).
Result<std::vector<InterfaceAddress>> read_interface_addresses();

// Makes the map hold exactly one entry per ifindex given (entries for other
// interfaces are removed); returns what was written.
Result<std::vector<NatIfaddrEntry>> write_nat_ifaddrs(int fd, const std::vector<uint32_t>& ifindexes,
                                                      const std::vector<InterfaceAddress>& addresses);

// What the map holds now, by ifindex.
std::vector<NatIfaddrEntry> read_nat_ifaddrs(int fd);

// read_interface_addresses() then write_nat_ifaddrs().
Result<std::vector<NatIfaddrEntry>> sync_nat_ifaddrs(int fd, const std::vector<uint32_t>& ifindexes);

}  // namespace sluice
