// UDP checksums that come out as zero. A one's-complement checksum of 0 is
// sent as 0xffff in UDP, because a zero field means "no checksum": allowed
// for IPv4, forbidden for IPv6 (RFC 8200 section 8.1: receivers discard it).
// The payload is chosen so that the translated datagram's checksum is 0.
#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr size_t kData = 32;

// The datagram src:sport → dst:dport with kData payload bytes whose last two
// are chosen so that the datagram's checksum is 0 (sent as 0xffff).
Bytes zero_sum_payload(bool v6, const std::string& src, const std::string& dst, uint16_t sport, uint16_t dport) {
    Bytes data(kData);
    for (size_t i = 0; i < kData - 2; ++i) data[i] = static_cast<uint8_t>(0x5a + 3 * i);
    // Sum of everything but the last word: pseudo-header, header (checksum 0), data.
    PacketBuilder b;
    if (v6)
        b.ipv6(src, dst);
    else
        b.ipv4(src, dst);
    Bytes ip = b.udp(sport, dport).payload(data).build_ip();
    const size_t l4 = v6 ? 40 : 20;
    Bytes seg(ip.begin() + static_cast<long>(l4), ip.end());
    seg[6] = seg[7] = 0;
    const uint32_t len = static_cast<uint32_t>(seg.size());
    uint32_t sum = ones_sum(seg.data(), seg.size(), proto::kUdp + len);
    sum = ones_sum(&ip[v6 ? 8 : 12], v6 ? 32 : 8, sum);
    const uint16_t last = static_cast<uint16_t>(~sum);
    data[kData - 2] = static_cast<uint8_t>(last >> 8);
    data[kData - 1] = static_cast<uint8_t>(last);
    return data;
}

class NatUdpChecksumTest : public NatTest {
protected:
    void zero_case(bool v6) {
        const std::string pub = wan_addr(v6), lan = lan_host(v6), wan = wan_host(v6);
        ASSERT_TRUE(apply_nat(kPortForwardsYaml));
        Bytes data = zero_sum_payload(v6, wan, lan, 41000, 53);
        Bytes expected = to_lan(v6, wan, lan).udp(41000, 53).payload(data).build();
        ASSERT_EQ(l4_checksum_field(expected), 0xffff) << "the test's payload does not sum to zero";
        Bytes in = from_wan(v6, wan, pub).udp(41000, 5353).payload(data).build();
        ASSERT_NE(l4_checksum_field(in), 0);
        auto r = expect_nat("datagram whose translated checksum is 0", in, wan_if(), XDP_REDIRECT, expected);
        EXPECT_EQ(l4_checksum_field(r.output), 0xffff);
    }
};

TEST_F(NatUdpChecksumTest, Ipv4ZeroChecksumIsSentAsAllOnes) {
    zero_case(false);
}
TEST_F(NatUdpChecksumTest, Ipv6ZeroChecksumIsSentAsAllOnes) {
    zero_case(true);
}

}  // namespace
}  // namespace sluice::test
