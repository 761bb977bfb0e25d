// Egress ports the TC pipeline can hand a packet to by its peer: veth
// devices whose other end is in another network namespace. There
// bpf_redirect_peer puts the packet straight into the peer's receive path
// (what the veth's transmit would do after a trip through the backlog and a
// softirq), so the `tc` mode saves that trip on every forwarded packet.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"

namespace sluice {

// The ifindexes of `ports` that are such veth devices (in this namespace).
Result<std::vector<uint32_t>> veth_ports_with_remote_peer(const std::vector<uint32_t>& ports);

// Writes `peers` into the peer_ports map and removes every other key.
Status write_peer_ports(int fd, const std::vector<uint32_t>& peers);

}  // namespace sluice
