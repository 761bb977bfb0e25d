// An independent reading of a frame: a small parser written without looking at
// the BPF code or the packet builder, so a test that checks the datapath's
// output with it is not checking the datapath (or the builder) against itself.
//
//   auto report = verify_checksums(out);
//   EXPECT_TRUE(report.ok()) << report.describe();
//   auto f = parse_frame(out);
//   EXPECT_EQ(f->ttl, 63);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "packet_builder.h"

namespace sluice::test {

struct ParsedFrame {
    Mac dst, src;
    std::vector<uint16_t> vlan_ids;  // outermost first
    uint16_t ethertype = 0;          // after the tags
    size_t l3_offset = 0;

    int ip_version = 0;          // 4, 6 or 0 (not IP)
    std::string src_ip, dst_ip;  // text form
    uint8_t ttl = 0;             // TTL or hop limit
    uint16_t ip_id = 0;          // IPv4 id, or the IPv6 fragment header id (low 16 bits)
    uint32_t frag_id = 0;        // IPv6 fragment id
    bool is_fragment = false;
    bool more_fragments = false;
    uint16_t frag_offset = 0;    // bytes
    std::vector<uint8_t> ext_headers;  // IPv6 extension header types walked

    uint8_t l4_proto = 0;
    size_t l4_offset = 0;
    size_t l4_length = 0;        // from the IP lengths
    bool l4_present = false;     // the L4 header (or its first 8 bytes for ICMP) is in the frame

    uint16_t sport = 0, dport = 0;
    uint32_t seq = 0, ack = 0;
    uint8_t tcp_flags = 0;
    uint16_t tcp_window = 0;
    uint16_t udp_length = 0;
    uint8_t icmp_type = 0, icmp_code = 0;
    uint16_t icmp_id = 0, icmp_seq = 0;
};

// nullopt (and a reason in *error) when the frame cannot be read up to its
// L3 header; a missing L4 header only clears l4_present.
std::optional<ParsedFrame> parse_frame(const Bytes& frame, std::string* error = nullptr);

struct ChecksumReport {
    std::vector<std::string> wrong;    // e.g. "ipv4-header", "tcp", "udp", "icmp", "icmpv6"
    std::vector<std::string> checked;  // what was verified
    std::string problem;               // could not be checked (truncated, unparseable)
    bool ok() const { return wrong.empty() && problem.empty(); }
    std::string describe() const;
};

// Verifies the IPv4 header checksum and the TCP/UDP/ICMP/ICMPv6 checksum
// (pseudo-header for v4 and v6). A zero UDP checksum is "none" in IPv4 and
// wrong in IPv6. Fragments: only a complete datagram's L4
// checksum can be verified, so fragments get the IPv4 header check only.
ChecksumReport verify_checksums(const Bytes& frame);

}  // namespace sluice::test
