// Fragmented datagrams of a translated flow: the first fragment carries the
// L4 header, so it gets the new port and a checksum updated for the whole
// datagram; later fragments get the new addresses only (they follow the
// first one's record). The expected fragments are cut from the translated
// datagram as the builder makes it whole (checksum over all of it), so
// equal bytes mean the reassembled datagram verifies.
#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40005;
constexpr size_t kData = 300;       // UDP data bytes
constexpr size_t kFirstPart = 104;  // L4 bytes in the first fragment (a multiple of 8)

// The UDP segment (header + data, checksum over all of it) of a whole
// datagram src:sport → dst:dport.
Bytes udp_segment(bool v6, const std::string& src, const std::string& dst, uint16_t sport, uint16_t dport,
                  uint8_t fill) {
    PacketBuilder b;
    if (v6)
        b.ipv6(src, dst);
    else
        b.ipv4(src, dst);
    Bytes ip = b.udp(sport, dport).payload_pattern(kData, fill).build_ip();
    return Bytes(ip.begin() + (v6 ? 40 : 20), ip.end());
}

class NatFragmentTest : public NatTest {
protected:
    // The two fragments of `seg` behind header builder b (addresses, TTL set).
    Bytes first(PacketBuilder b, bool v6, const Bytes& seg) const {
        Bytes part(seg.begin(), seg.begin() + kFirstPart);
        if (v6) return b.fragment_header(0, true, 0x01020304).protocol(proto::kUdp).payload(part).build();
        return b.ip_id(0x4321).more_fragments().protocol(proto::kUdp).payload(part).build();
    }
    Bytes later(PacketBuilder b, bool v6, const Bytes& seg) const {
        Bytes part(seg.begin() + kFirstPart, seg.end());
        if (v6) return b.fragment_header(kFirstPart, false, 0x01020304).protocol(proto::kUdp).payload(part).build();
        return b.ip_id(0x4321).frag_offset(kFirstPart).protocol(proto::kUdp).payload(part).build();
    }
    void fragments_case(bool v6);
};

void NatFragmentTest::fragments_case(bool v6) {
    const std::string lan = lan_host(v6), wan = wan_host(v6), nat = wan_addr(v6);
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));

    Bytes seg = udp_segment(v6, lan, wan, kClientPort, 53, 0x33);
    auto r = expect_nat("first fragment", first(from_lan(v6, lan, wan), v6, seg), lan_if(), XDP_REDIRECT, std::nullopt);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f && f->l4_present);
    EXPECT_EQ(f->src_ip, nat);
    const uint16_t port = f->sport;
    EXPECT_GE(port, kIfaddrPortFirst);
    EXPECT_LE(port, kIfaddrPortLast);
    Bytes seg_out = udp_segment(v6, nat, wan, port, 53, 0x33);
    Bytes expected = first(to_wan(v6, nat, wan), v6, seg_out);
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);

    expect_nat("later fragment", later(from_lan(v6, lan, wan), v6, seg), lan_if(), XDP_REDIRECT,
               later(to_wan(v6, nat, wan), v6, seg_out));
    EXPECT_EQ(stat_change(STAT_FRAG_FOLLOWED), 1);

    // The answer, fragmented too, comes back to the original port.
    snapshot_stats();
    Bytes back = udp_segment(v6, wan, nat, 53, port, 0x77);
    Bytes back_out = udp_segment(v6, wan, lan, 53, kClientPort, 0x77);
    expect_nat("answer, first fragment", first(from_wan(v6, wan, nat), v6, back), wan_if(), XDP_REDIRECT,
               first(to_lan(v6, wan, lan), v6, back_out));
    expect_nat("answer, later fragment", later(from_wan(v6, wan, nat), v6, back), wan_if(), XDP_REDIRECT,
               later(to_lan(v6, wan, lan), v6, back_out));
}

TEST_F(NatFragmentTest, Ipv4SourceNatFragments) {
    fragments_case(false);
}
TEST_F(NatFragmentTest, Ipv6SourceNatFragments) {
    fragments_case(true);
}

}  // namespace
}  // namespace sluice::test
