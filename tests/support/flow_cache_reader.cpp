#include "flow_cache_reader.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstring>
#include <vector>

namespace sluice::test {

flow_cache_key flow_cache_key_of(uint16_t zone_in, const Ipv4Addr& src, const Ipv4Addr& dst, uint16_t sport,
                                 uint16_t dport, uint8_t protocol) {
    flow_cache_key k;
    std::memset(&k, 0, sizeof k);
    k.family = SLUICE_FAMILY_IPV4;
    k.protocol = protocol;
    k.zone_in = zone_in;
    k.src_port = htons(sport);
    k.dst_port = htons(dport);
    std::memcpy(&k.src_addr[0], src.bytes.data(), 4);
    std::memcpy(&k.dst_addr[0], dst.bytes.data(), 4);
    return k;
}

flow_cache_key flow_cache_key_of(uint16_t zone_in, const Ipv6Addr& src, const Ipv6Addr& dst, uint16_t sport,
                                 uint16_t dport, uint8_t protocol) {
    flow_cache_key k;
    std::memset(&k, 0, sizeof k);
    k.family = SLUICE_FAMILY_IPV6;
    k.protocol = protocol;
    k.zone_in = zone_in;
    k.src_port = htons(sport);
    k.dst_port = htons(dport);
    std::memcpy(k.src_addr, src.bytes.data(), 16);
    std::memcpy(k.dst_addr, dst.bytes.data(), 16);
    return k;
}

std::optional<FlowCacheEntry> lookup_flow_cache(int fd, const flow_cache_key& key) {
    static const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) return std::nullopt;
    // Per-CPU values are laid out rounded up to 8 bytes each.
    constexpr size_t stride = (sizeof(flow_cache_value) + 7) / 8 * 8;
    std::vector<uint8_t> values(stride * static_cast<size_t>(cpus));
    if (bpf_map_lookup_elem(fd, &key, values.data()) != 0) return std::nullopt;
    FlowCacheEntry entry;
    for (int c = 0; c < cpus; ++c) {
        flow_cache_value v;
        std::memcpy(&v, &values[stride * static_cast<size_t>(c)], sizeof v);
        if (v.config_generation == 0) continue;
        if (entry.cpus++ == 0) entry.value = v;
    }
    if (entry.cpus == 0) return std::nullopt;
    return entry;
}

}  // namespace sluice::test
