// A fluent builder for test frames, in the spirit of bpfilter's
// `Ethernet() / IPv4{...} / TCP{...}`: layers are pushed outermost first, each
// modifier applies to the most recent layer of its kind, and build() computes
// every length, next-protocol field and checksum unless a test overrides it to
// make a malformed packet.
//
//   auto syn = PacketBuilder()
//                  .eth(host_mac, fw_mac)
//                  .ipv4("198.18.1.10", "198.18.100.200").ttl(64)
//                  .tcp(40000, 80).seq(1000).syn()
//                  .build();
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice::test {

using Bytes = std::vector<uint8_t>;

struct Mac {
    std::array<uint8_t, 6> bytes{};
    static Mac parse(std::string_view text);  // "02:00:00:00:01:10"; throws on bad input
    std::string str() const;
    bool operator==(const Mac&) const = default;
};

struct Ipv4Addr {
    std::array<uint8_t, 4> bytes{};
    static Ipv4Addr parse(std::string_view text);  // throws on bad input
    std::string str() const;
    bool operator==(const Ipv4Addr&) const = default;
};

struct Ipv6Addr {
    std::array<uint8_t, 16> bytes{};
    static Ipv6Addr parse(std::string_view text);  // throws on bad input
    std::string str() const;
    bool operator==(const Ipv6Addr&) const = default;
};

// Protocol numbers used by the builder and the tests.
namespace proto {
inline constexpr uint8_t kHopByHop = 0;
inline constexpr uint8_t kIcmp = 1;
inline constexpr uint8_t kTcp = 6;
inline constexpr uint8_t kUdp = 17;
inline constexpr uint8_t kRouting = 43;
inline constexpr uint8_t kFragment = 44;
inline constexpr uint8_t kIcmpv6 = 58;
inline constexpr uint8_t kNoNext = 59;
inline constexpr uint8_t kDestOpts = 60;
}  // namespace proto

namespace tcp_flag {
inline constexpr uint8_t kFin = 0x01;
inline constexpr uint8_t kSyn = 0x02;
inline constexpr uint8_t kRst = 0x04;
inline constexpr uint8_t kPsh = 0x08;
inline constexpr uint8_t kAck = 0x10;
inline constexpr uint8_t kUrg = 0x20;
}  // namespace tcp_flag

// Internet checksum helpers (RFC 1071), shared by the builder. The verifier in
// checksum_verify.cpp deliberately does not use these.
uint32_t checksum_add(uint32_t sum, const uint8_t* data, size_t len);
uint16_t checksum_fold(uint32_t sum);

class PacketBuilder {
public:
    // ---- L2 ----
    PacketBuilder& eth(const Mac& src, const Mac& dst);
    PacketBuilder& eth(std::string_view src, std::string_view dst);
    PacketBuilder& ethertype(uint16_t type);  // override on the last eth/vlan layer
    // 802.1Q tag (tpid 0x8100) or 802.1ad (0x88a8); pushed after eth, outermost first.
    PacketBuilder& vlan(uint16_t vid, uint8_t pcp = 0, uint16_t tpid = 0x8100);
    PacketBuilder& arp_request(const Mac& sender_mac, const Ipv4Addr& sender_ip,
                               const Ipv4Addr& target_ip);

    // ---- IPv4 (modifiers apply to the last IPv4 header) ----
    PacketBuilder& ipv4(const Ipv4Addr& src, const Ipv4Addr& dst);
    PacketBuilder& ipv4(std::string_view src, std::string_view dst);
    PacketBuilder& ttl(uint8_t ttl);
    PacketBuilder& tos(uint8_t tos);
    PacketBuilder& ip_id(uint16_t id);
    PacketBuilder& dont_fragment(bool on = true);
    PacketBuilder& more_fragments(bool on = true);
    PacketBuilder& frag_offset(uint16_t offset_bytes);  // must be a multiple of 8
    PacketBuilder& ip_options(Bytes options);           // padded to 4 bytes with EOL
    PacketBuilder& total_length(uint16_t len);          // override
    PacketBuilder& ihl(uint8_t words);                  // override
    PacketBuilder& ip_version(uint8_t version);         // override (v4 or v6 header)
    PacketBuilder& ipv4_checksum(uint16_t value);       // override, network order value
    PacketBuilder& corrupt_ipv4_checksum();

    // ---- IPv6 (modifiers apply to the last IPv6 header) ----
    PacketBuilder& ipv6(const Ipv6Addr& src, const Ipv6Addr& dst);
    PacketBuilder& ipv6(std::string_view src, std::string_view dst);
    PacketBuilder& hop_limit(uint8_t hops);
    PacketBuilder& flow_label(uint32_t label);
    PacketBuilder& payload_length(uint16_t len);  // override

    // IPv6 extension headers, in the order pushed. Options are padded with PadN.
    PacketBuilder& hop_by_hop(Bytes options = {});
    PacketBuilder& destination_options(Bytes options = {});
    // Segment routing header (type 4) carrying the given segments, or, with an
    // explicit routing_type, that type with `data` as its type-specific bytes.
    PacketBuilder& routing(uint8_t segments_left = 0, std::vector<Ipv6Addr> segments = {});
    PacketBuilder& routing_raw(uint8_t routing_type, uint8_t segments_left, Bytes data);
    PacketBuilder& fragment_header(uint16_t offset_bytes, bool more, uint32_t id);
    PacketBuilder& ext_length(uint8_t hdr_ext_len);  // override on the last ext header

    // Next-protocol override of the last IPv4 header, IPv6 header or ext header
    // (use for fragments that carry raw L4 bytes, or for unknown protocols).
    PacketBuilder& protocol(uint8_t proto);

    // ---- L4 (modifiers apply to the last L4 header) ----
    PacketBuilder& tcp(uint16_t sport, uint16_t dport);
    PacketBuilder& seq(uint32_t seq);
    PacketBuilder& ack_seq(uint32_t ack);  // sets the number, not the flag
    PacketBuilder& flags(uint8_t flags);   // replaces all flags
    PacketBuilder& syn();                  // adds SYN
    PacketBuilder& ack();                  // adds ACK
    PacketBuilder& fin();
    PacketBuilder& rst();
    PacketBuilder& psh();
    PacketBuilder& window(uint16_t window);
    PacketBuilder& tcp_options(Bytes options);  // padded to 4 bytes with EOL
    PacketBuilder& data_offset(uint8_t words);  // override

    PacketBuilder& udp(uint16_t sport, uint16_t dport);
    PacketBuilder& udp_length(uint16_t len);    // override

    // ICMP (v4) and ICMPv6: echo with id/seq; errors quoting `quoted` (an IP
    // packet, typically another builder's build_ip(), see quote()).
    PacketBuilder& icmp_echo_request(uint16_t id, uint16_t seq);
    PacketBuilder& icmp_echo_reply(uint16_t id, uint16_t seq);
    PacketBuilder& icmp_error(uint8_t type, uint8_t code, const Bytes& quoted, uint32_t rest = 0);
    PacketBuilder& icmp(uint8_t type, uint8_t code, uint32_t rest = 0);
    PacketBuilder& icmpv6_echo_request(uint16_t id, uint16_t seq);
    PacketBuilder& icmpv6_echo_reply(uint16_t id, uint16_t seq);
    PacketBuilder& icmpv6_error(uint8_t type, uint8_t code, const Bytes& quoted, uint32_t rest = 0);
    PacketBuilder& icmpv6(uint8_t type, uint8_t code, uint32_t rest = 0);

    PacketBuilder& l4_checksum(uint16_t value);  // override on the last L4 header
    PacketBuilder& corrupt_l4_checksum();

    // ---- data ----
    PacketBuilder& payload(const Bytes& data);
    PacketBuilder& payload(std::string_view text);
    PacketBuilder& payload_pattern(size_t len, uint8_t first = 0);  // first, first+1, ...

    // Cut the built frame to n bytes (after all lengths/checksums were computed).
    PacketBuilder& truncate(size_t n);

    Bytes build() const;     // the whole frame
    Bytes build_ip() const;  // from the first IP header on (for quoting in ICMP errors)

private:
    struct Eth { Mac src, dst; std::optional<uint16_t> type; };
    struct Vlan { uint16_t tpid, tci; std::optional<uint16_t> type; };
    struct Arp { Mac sha; Ipv4Addr spa, tpa; };
    struct Ipv4 {
        Ipv4Addr src, dst;
        uint8_t tos = 0, ttl = 64, version = 4;
        uint16_t id = 0, frag_offset = 0;
        bool df = false, mf = false;
        Bytes options;
        std::optional<uint16_t> total_length, checksum;
        std::optional<uint8_t> ihl, protocol;
        bool corrupt_checksum = false;
    };
    struct Ipv6 {
        Ipv6Addr src, dst;
        uint8_t hop_limit = 64, version = 6, tclass = 0;
        uint32_t flow = 0;
        std::optional<uint16_t> payload_length;
        std::optional<uint8_t> next_header;
    };
    struct Ipv6Ext {
        uint8_t type;
        Bytes body;  // everything after the next-header and length bytes
        std::optional<uint8_t> next_header, hdr_ext_len;
    };
    struct Tcp {
        uint16_t sport, dport;
        uint32_t seq = 0, ack = 0;
        uint8_t flags = 0;
        uint16_t window = 65535, urgent = 0;
        Bytes options;
        std::optional<uint8_t> data_offset;
        std::optional<uint16_t> checksum;
        bool corrupt_checksum = false;
    };
    struct Udp {
        uint16_t sport, dport;
        std::optional<uint16_t> length, checksum;
        bool corrupt_checksum = false;
    };
    struct Icmp {
        bool v6;
        uint8_t type, code;
        uint32_t rest;
        std::optional<uint16_t> checksum;
        bool corrupt_checksum = false;
    };
    struct Payload { Bytes data; };
    using Layer = std::variant<Eth, Vlan, Arp, Ipv4, Ipv6, Ipv6Ext, Tcp, Udp, Icmp, Payload>;

    template <typename T> T& last(const char* what);
    Bytes serialize(size_t from) const;
    Bytes serialize_layer(size_t i, const Bytes& rest) const;
    uint16_t next_type_l2(size_t i) const;
    uint8_t next_proto_l3(size_t i) const;
    uint32_t pseudo_header_sum(size_t l4_index, size_t l4_len, uint8_t proto) const;

    std::vector<Layer> layers_;
    std::optional<size_t> truncate_;
};

// The first `max_len` bytes of an IP packet, the way an ICMP error quotes it.
Bytes quote(const Bytes& ip_packet, size_t max_len);

// Hex dump helpers for diagnostics.
std::string hex(const Bytes& bytes);
Bytes from_hex(std::string_view text);  // whitespace ignored

}  // namespace sluice::test
