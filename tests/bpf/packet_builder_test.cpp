// Self-tests of the harness: the packet builder against frames written out by
// hand (checked with scapy when they were recorded), and the independent
// verifier against the builder. No privileges needed.
#include <gtest/gtest.h>

#include "checksum_verify.h"
#include "packet_builder.h"
#include "xdp_runner.h"

namespace sluice::test {
namespace {

const Mac kHostMac = Mac::parse("02:00:00:00:01:10");
const Mac kFwMac = Mac::parse("02:00:00:00:01:01");

TEST(PacketBuilder, Ipv4TcpSynMatchesReferenceBytes) {
    Bytes frame = PacketBuilder()
                      .eth(kHostMac, kFwMac)
                      .ipv4("198.18.1.10", "198.18.100.200")
                      .ip_id(1)
                      .ttl(64)
                      .tcp(40000, 80)
                      .seq(1000)
                      .syn()
                      .window(8192)
                      .build();
    // scapy: Ether(src=..,dst=..)/IP(src=..,dst=..,id=1,ttl=64)/TCP(sport=40000,dport=80,seq=1000,flags="S",window=8192)
    Bytes reference = from_hex(
        "02 00 00 00 01 01 02 00 00 00 01 10 08 00 45 00"
        "00 28 00 01 00 00 40 06 88 d8 c6 12 01 0a c6 12"
        "64 c8 9c 40 00 50 00 00 03 e8 00 00 00 00 50 02"
        "20 00 fd 72 00 00");
    EXPECT_EQ(frame, reference) << hex_diff(reference, frame);
}

TEST(PacketBuilder, Ipv6UdpMatchesReferenceBytes) {
    Bytes frame = PacketBuilder()
                      .eth(kHostMac, kFwMac)
                      .ipv6("2001:2:0:1::10", "2001:2:0:100::200")
                      .hop_limit(64)
                      .udp(5353, 53)
                      .payload("abcd")
                      .build();
    // scapy: Ether()/IPv6(src=..,dst=..,hlim=64)/UDP(sport=5353,dport=53)/b"abcd"
    Bytes reference = from_hex(
        "02 00 00 00 01 01 02 00 00 00 01 10 86 dd 60 00"
        "00 00 00 0c 11 40 20 01 00 02 00 00 00 01 00 00"
        "00 00 00 00 00 10 20 01 00 02 00 00 01 00 00 00"
        "00 00 00 00 02 00 14 e9 00 35 00 0c e2 da 61 62"
        "63 64");
    EXPECT_EQ(frame, reference) << hex_diff(reference, frame);
}

TEST(PacketBuilder, ChecksumsVerifyIndependently) {
    std::vector<Bytes> frames = {
        PacketBuilder().eth(kHostMac, kFwMac).ipv4("198.18.1.10", "198.18.100.200").tcp(1, 2).syn().payload("x").build(),
        PacketBuilder().eth(kHostMac, kFwMac).ipv4("198.18.1.10", "198.18.100.200").ip_options({0x94, 0x04, 0, 0})
            .udp(1, 53).payload_pattern(33).build(),
        PacketBuilder().eth(kHostMac, kFwMac).vlan(100).ipv4("198.18.1.10", "198.18.100.200").icmp_echo_request(0x1234, 1)
            .payload_pattern(56).build(),
        PacketBuilder().eth(kHostMac, kFwMac).ipv6("2001:2:0:1::10", "2001:2:0:100::200").hop_by_hop().routing()
            .destination_options().tcp(1000, 80).syn().tcp_options({2, 4, 5, 0xb4}).build(),
        PacketBuilder().eth(kHostMac, kFwMac).ipv6("2001:2:0:1::10", "2001:2:0:100::200").icmpv6_echo_request(7, 9)
            .payload("ping").build(),
    };
    for (const auto& f : frames) {
        auto r = verify_checksums(f);
        EXPECT_TRUE(r.ok()) << r.describe() << "\n" << summarize_frame(f);
        EXPECT_FALSE(r.checked.empty());
    }
}

TEST(PacketBuilder, CorruptChecksumsAreDetected) {
    auto v4 = PacketBuilder().eth(kHostMac, kFwMac).ipv4("198.18.1.10", "198.18.100.200");
    auto ip_bad = verify_checksums(PacketBuilder(v4).corrupt_ipv4_checksum().tcp(1, 2).build());
    EXPECT_EQ(ip_bad.wrong, std::vector<std::string>{"ipv4-header"});
    auto tcp_bad = verify_checksums(PacketBuilder(v4).tcp(1, 2).corrupt_l4_checksum().build());
    EXPECT_EQ(tcp_bad.wrong, std::vector<std::string>{"tcp"});
    auto udp_bad = verify_checksums(PacketBuilder(v4).udp(1, 2).l4_checksum(0x1234).payload("x").build());
    EXPECT_EQ(udp_bad.wrong, std::vector<std::string>{"udp"});
    auto icmp6_bad = verify_checksums(PacketBuilder()
                                          .eth(kHostMac, kFwMac)
                                          .ipv6("2001:2:0:1::10", "2001:2:0:100::200")
                                          .icmpv6_echo_reply(1, 1)
                                          .corrupt_l4_checksum()
                                          .build());
    EXPECT_EQ(icmp6_bad.wrong, std::vector<std::string>{"icmpv6"});
}

TEST(PacketBuilder, IcmpErrorQuotesInnerPacket) {
    Bytes inner = PacketBuilder().ipv4("198.18.1.10", "198.18.100.200").udp(40000, 54).payload_pattern(100).build_ip();
    Bytes frame = PacketBuilder()
                      .eth(kFwMac, kHostMac)
                      .ipv4("198.18.100.254", "198.18.1.10")
                      .icmp_error(3, 4, quote(inner, 28), 1400)
                      .build();
    auto f = parse_frame(frame);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->icmp_type, 3);
    EXPECT_EQ(f->icmp_code, 4);
    EXPECT_EQ(frame.size(), 14u + 20 + 8 + 28);
    EXPECT_TRUE(std::equal(inner.begin(), inner.begin() + 28, frame.begin() + 42));
    EXPECT_TRUE(verify_checksums(frame).ok());
}

TEST(PacketBuilder, Ipv6FragmentAndExtensionChainParse) {
    Bytes frame = PacketBuilder()
                      .eth(kHostMac, kFwMac)
                      .ipv6("2001:2:0:1::10", "2001:2:0:100::200")
                      .hop_by_hop()
                      .fragment_header(1232, true, 0xabcdef)
                      .protocol(proto::kUdp)
                      .payload_pattern(64)
                      .build();
    auto f = parse_frame(frame);
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->is_fragment);
    EXPECT_TRUE(f->more_fragments);
    EXPECT_EQ(f->frag_offset, 1232);
    EXPECT_EQ(f->frag_id, 0xabcdefu);
    EXPECT_EQ(f->l4_proto, proto::kUdp);
    EXPECT_EQ(f->ext_headers, (std::vector<uint8_t>{proto::kHopByHop, proto::kFragment}));
}

TEST(PacketBuilder, OverridesMakeMalformedPackets) {
    Bytes frame = PacketBuilder()
                      .eth(kHostMac, kFwMac)
                      .vlan(100)
                      .vlan(200, 0, 0x8100)
                      .ipv4("198.18.1.10", "198.18.100.200")
                      .ihl(4)
                      .total_length(9000)
                      .ip_version(5)
                      .tcp(1, 2)
                      .data_offset(3)
                      .truncate(40)
                      .build();
    ASSERT_EQ(frame.size(), 40u);
    EXPECT_EQ(frame[12], 0x81);  // outer tag
    EXPECT_EQ(frame[16], 0x81);  // inner tag's TPID in the outer tag's type
    EXPECT_EQ(frame[22], 0x54);  // version 5, IHL 4
    EXPECT_EQ(frame[24], 0x23);  // total length 9000
    EXPECT_EQ(frame[25], 0x28);
}

TEST(HexDiff, MarksDifferingBytes) {
    std::string d = hex_diff({1, 2, 3}, {1, 9, 3, 4});
    EXPECT_NE(d.find("length differs"), std::string::npos);
    EXPECT_NE(d.find("^^"), std::string::npos);
}

}  // namespace
}  // namespace sluice::test
