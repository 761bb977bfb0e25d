// The frames `sluice trace` runs: one described by its fields (addresses,
// protocol, ports, TCP flags, ICMP type, payload length), built as it would
// arrive on the interface (Ethernet to the interface's own MAC, checksums
// right), or the frames of a pcap file.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::cli {

struct PacketFields {
    std::string src, dst;          // IPv4 or IPv6 addresses, same family
    std::string protocol = "tcp";  // tcp | udp | icmp | icmpv6 | a number
    uint16_t src_port = 40000, dst_port = 80;
    std::string tcp_flags = "S";   // letters of F S R P A U
    uint8_t icmp_type = 0xff;      // 0xff: echo request of the family
    uint8_t icmp_code = 0;
    uint16_t icmp_id = 1;
    uint32_t payload = 0;          // bytes after the L4 header
    uint8_t ttl = 64;
};

// The packet-field options given on the command line ("--sport", ...) that
// describe nothing in this packet (--sport for ICMP, --flags for UDP, any of
// them with a pcap file), as one error naming them and why; ok when all apply.
// Said rather than ignored: a trace of a packet other than the one asked for
// answers the wrong question.
Status check_fields_apply(const PacketFields& f, const std::vector<std::string>& given, bool from_pcap);

// dst_mac: the ingress interface's address (the frame is for it).
Result<std::vector<uint8_t>> build_frame(const PacketFields& f, const std::array<uint8_t, 6>& dst_mac);

// Every frame of an Ethernet pcap file (tcpdump -w).
Result<std::vector<std::vector<uint8_t>>> read_pcap_frames(const std::string& path);

}  // namespace sluice::cli
