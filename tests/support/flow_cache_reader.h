// Reading the per-CPU flow cache (maps/flow_cache.h) from tests: the verdict
// the policy stage remembered for a flow that got no session (deny, reject,
// default deny/reject), with the policy id that decided it.
#pragma once

#include <cstdint>
#include <optional>

#include "packet_builder.h"

extern "C" {
#include "flow_cache.h"
}

namespace sluice::test {

// Keys as xdp_policy_prog builds them: ports in network order, the ICMP echo
// identifier in src_port (requests) or dst_port (replies) as in session keys.
flow_cache_key flow_cache_key_of(uint16_t zone_in, const Ipv4Addr& src, const Ipv4Addr& dst, uint16_t sport,
                                 uint16_t dport, uint8_t protocol);
flow_cache_key flow_cache_key_of(uint16_t zone_in, const Ipv6Addr& src, const Ipv6Addr& dst, uint16_t sport,
                                 uint16_t dport, uint8_t protocol);

struct FlowCacheEntry {
    flow_cache_value value{};  // the first CPU's non-empty value
    int cpus = 0;              // how many CPUs hold a non-empty value for the key
};

// nullopt when no CPU has the key. A CPU's slot counts as non-empty when its
// config_generation is set (the datapath writes >= 1 there).
std::optional<FlowCacheEntry> lookup_flow_cache(int map_fd, const flow_cache_key& key);

}  // namespace sluice::test
