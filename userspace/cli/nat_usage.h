// How full source NAT's address space is: a pool's (or an interface
// address's) capacity and the port reservations (nat_ports) that fall in it,
// per protocol. Pure: the reservations are given, not read here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loader/nat_reservations.h"
#include "daemon/published_state.h"

namespace sluice::cli {

struct PoolRange {
    uint8_t family = SLUICE_FAMILY_IPV4;
    std::array<uint8_t, 16> first{}, last{};   // network order; IPv4 in the first 4 bytes
};

// A pool as the state file describes it (daemon/nat_state.h).
struct PoolSpec {
    std::string name;
    std::vector<PoolRange> ranges;
    uint16_t port_first = 1024, port_last = 65535;
};

PoolSpec pool_spec_from_state(const state::NatPool& pool);

// Addresses in the pool, of one family or (family 0) of both; saturating at
// UINT64_MAX, which a large IPv6 range reaches.
uint64_t pool_address_count(const PoolSpec& pool, uint8_t family = 0);
// Translations one protocol can hold: addresses × ports (saturating).
uint64_t pool_capacity(const PoolSpec& pool, uint8_t family = 0);
bool reservation_in_pool(const nat_port_key& key, const PoolSpec& pool);

// {"tcp": n, "udp": n, "icmp": n, "icmpv6": n, ["<number>": n,] "total": n}
// over the reservations the predicate accepts.
nlohmann::json count_by_protocol(const std::vector<NatReservation>& reservations,
                                 const std::function<bool(const nat_port_key&)>& accept);

// The pool's entry for `show nat`: name, index, addresses, port_first,
// port_last, persistent, address_count, capacity_per_protocol, in_use
// (count_by_protocol), and the same three per family in "by_family"
// ({"ipv4": {...}, "ipv6": {...}}, families the pool has): a flow takes an
// address of its own family, so a mixed pool fills per family.
nlohmann::json pool_usage_json(const state::NatPool& pool, const std::vector<NatReservation>& reservations);

}  // namespace sluice::cli
