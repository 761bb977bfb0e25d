// The traffic of `sluice bench smallpkt`: 64-byte UDP frames from the LAN
// host to the WAN host over 256 flows, as a trafgen configuration (trafgen(8)
// packet syntax). Every flow is one literal packet, checksums included, so
// trafgen only copies bytes (no per-packet arithmetic in the generator) and
// sends the flows round robin: flow i, i+1, ... i+255, i again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::bench {

struct UdpFlowsSpec {
    std::string destination_mac;  // the firewall's LAN interface
    std::string source_mac;       // the LAN host's
    std::string source = "198.18.1.10";
    std::string destination = "198.18.100.200";
    int flows = 256;                    // source ports first_source_port .. + flows - 1
    uint16_t first_source_port = 10000;
    uint16_t destination_port = 9;      // discard
    // 60 bytes handed to the device: a 64-byte frame on a wire, whose last
    // four (the FCS) a veth does not carry. 14 Ethernet + 20 IPv4 + 8 UDP
    // + 18 bytes of payload.
    size_t frame_bytes = 60;
};

// Flow `flow` (0-based) of the spec as the bytes of one frame: Ethernet
// to destination_mac, IPv4 (TTL 64, DF, id 0) with its header checksum, UDP
// from first_source_port + flow with its checksum, zero payload. An Error
// for an address or MAC that does not parse, a flow outside the spec, a
// port range past 65535, or a frame too short for the headers.
Result<std::vector<uint8_t>> udp_flow_frame(const UdpFlowsSpec& spec, int flow);

// The trafgen configuration: one `{ ... }` packet per flow, in flow order,
// its bytes as hex literals.
Result<std::string> trafgen_udp_flows_config(const UdpFlowsSpec& spec);

}  // namespace sluice::bench
