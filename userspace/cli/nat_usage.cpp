#include "cli/nat_usage.h"

#include <arpa/inet.h>

#include <cstring>

namespace sluice::cli {
namespace {

using nlohmann::json;

constexpr uint64_t kMax = UINT64_MAX;

uint64_t saturating_mul(uint64_t a, uint64_t b) { return a != 0 && b > kMax / a ? kMax : a * b; }
uint64_t saturating_add(uint64_t a, uint64_t b) { return b > kMax - a ? kMax : a + b; }

size_t address_bytes(uint8_t family) { return family == SLUICE_FAMILY_IPV4 ? 4 : 16; }

// last - first + 1 over big-endian bytes, saturating.
uint64_t range_size(const PoolRange& r) {
    size_t n = address_bytes(r.family);
    uint8_t diff[16] = {};
    int borrow = 0;
    for (size_t i = n; i-- > 0;) {
        int d = int(r.last[i]) - int(r.first[i]) - borrow;
        borrow = d < 0;
        diff[i] = static_cast<uint8_t>(d + (borrow ? 256 : 0));
    }
    if (borrow) return 0;  // last < first: not a range
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        if (n - i > 8 && diff[i] != 0) return kMax;
        if (n - i <= 8) v = (v << 8) | diff[i];
    }
    return saturating_add(v, 1);
}

}  // namespace

PoolSpec pool_spec_from_state(const state::NatPool& pool) {
    PoolSpec spec;
    spec.name = pool.name;
    spec.port_first = pool.port_first;
    spec.port_last = pool.port_last;
    for (const auto& r : pool.ranges) {
        PoolRange range;
        const bool v4 = r.family == "ipv4";
        range.family = v4 ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
        const int af = v4 ? AF_INET : AF_INET6;
        if (inet_pton(af, r.first.c_str(), range.first.data()) != 1 ||
            inet_pton(af, r.last.c_str(), range.last.data()) != 1)
            continue;
        spec.ranges.push_back(range);
    }
    return spec;
}

uint64_t pool_address_count(const PoolSpec& pool, uint8_t family) {
    uint64_t total = 0;
    for (const auto& r : pool.ranges)
        if (family == 0 || r.family == family) total = saturating_add(total, range_size(r));
    return total;
}

uint64_t pool_capacity(const PoolSpec& pool, uint8_t family) {
    uint64_t ports = pool.port_last >= pool.port_first ? uint64_t(pool.port_last - pool.port_first) + 1 : 0;
    return saturating_mul(pool_address_count(pool, family), ports);
}

bool reservation_in_pool(const nat_port_key& key, const PoolSpec& pool) {
    uint8_t addr[16];
    std::memcpy(addr, key.addr, 16);
    for (const auto& r : pool.ranges) {
        if (r.family != key.family) continue;
        size_t n = address_bytes(r.family);
        if (std::memcmp(addr, r.first.data(), n) >= 0 && std::memcmp(addr, r.last.data(), n) <= 0) return true;
    }
    return false;
}

json count_by_protocol(const std::vector<NatReservation>& reservations,
                       const std::function<bool(const nat_port_key&)>& accept) {
    json counts = {{"tcp", 0}, {"udp", 0}, {"icmp", 0}, {"icmpv6", 0}};
    uint64_t total = 0;
    for (const auto& [key, value] : reservations) {
        if (!accept(key)) continue;
        std::string proto = protocol_name(key.protocol);
        counts[proto] = counts.value(proto, uint64_t{0}) + 1;
        ++total;
    }
    counts["total"] = total;
    return counts;
}

json pool_usage_json(const state::NatPool& pool, const std::vector<NatReservation>& reservations) {
    PoolSpec spec = pool_spec_from_state(pool);
    auto usage = [&](uint8_t family) {
        auto in_family_pool = [&](const nat_port_key& k) {
            return (family == 0 || k.family == family) && reservation_in_pool(k, spec);
        };
        json u = json::object();
        u["address_count"] = pool_address_count(spec, family);
        u["capacity_per_protocol"] = pool_capacity(spec, family);
        u["in_use"] = count_by_protocol(reservations, in_family_pool);
        return u;
    };
    json out = usage(0);
    out["name"] = spec.name;
    out["index"] = pool.index;
    out["addresses"] = pool.addresses;
    out["port_first"] = spec.port_first;
    out["port_last"] = spec.port_last;
    out["persistent"] = pool.persistent;
    out["by_family"] = json::object();
    for (uint8_t family : {uint8_t{SLUICE_FAMILY_IPV4}, uint8_t{SLUICE_FAMILY_IPV6}}) {
        bool present = false;
        for (const auto& r : spec.ranges) present = present || r.family == family;
        if (present) out["by_family"][family == SLUICE_FAMILY_IPV4 ? "ipv4" : "ipv6"] = usage(family);
    }
    return out;
}

}  // namespace sluice::cli
