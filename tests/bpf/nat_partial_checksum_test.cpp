// CHECKSUM_PARTIAL input (veth, virtio in generic mode): the TCP/UDP checksum
// field holds the pseudo-header sum, not complemented, and the stack or NIC
// completes it on transmit over the bytes as they are then. A translated
// packet must leave with the pseudo-header sum of its translated headers, so
// that completing it gives a valid checksum. Both sums are computed in the
// test (ones_sum, not the builder's or the datapath's arithmetic).
#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40002;

struct PartialCase {
    const char* name;
    bool v6;
    L4Kind kind;
};
void PrintTo(const PartialCase& c, std::ostream* os) {
    *os << c.name;
}

// The L4 layer of the flow's packets; `fwd` = client → server.
PacketBuilder& l4(PacketBuilder& b, L4Kind kind, bool fwd, uint16_t cport, uint16_t sport) {
    if (kind == L4Kind::tcp) {
        if (fwd) return b.tcp(cport, sport).seq(1).syn().payload_pattern(0);
        return b.tcp(sport, cport).seq(500).ack_seq(2).syn().ack();
    }
    if (fwd) return b.udp(cport, sport).payload_pattern(45, 0x20);
    return b.udp(sport, cport).payload_pattern(123, 0x55);
}

// The frame with its L4 checksum replaced by its own pseudo-header sum.
Bytes partial(PacketBuilder b) {
    uint16_t ph = pseudo_header_sum(b.build());
    return b.l4_checksum(ph).build();
}

class NatPartialChecksumTest : public NatTest, public ::testing::WithParamInterface<PartialCase> {};

TEST_P(NatPartialChecksumTest, TranslatedFieldIsThePseudoHeaderSumOfTheTranslatedPacket) {
    const auto& c = GetParam();
    const bool v6 = c.v6;
    const uint16_t sport = c.kind == L4Kind::tcp ? 80 : 53;
    const std::string lan = lan_host(v6), wan = wan_host(v6), nat = wan_addr(v6);
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));

    auto b_in = from_lan(v6, lan, wan);
    Bytes in = partial(l4(b_in, c.kind, true, kClientPort, sport));
    ASSERT_EQ(l4_checksum_field(in), pseudo_header_sum(in));
    auto r = expect_nat("partial, outbound", in, lan_if(), XDP_REDIRECT, std::nullopt, false);
    const uint16_t port = frame_sport(r.output);
    ASSERT_GE(port, kIfaddrPortFirst);
    ASSERT_LE(port, kIfaddrPortLast);

    auto b_out = to_wan(v6, nat, wan);
    l4(b_out, c.kind, true, port, sport);
    EXPECT_EQ(l4_checksum_field(r.output), pseudo_header_sum(r.output))
        << "the field must hold the translated packet's pseudo-header sum";
    Bytes expected = partial(b_out);
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
    // Completed the way the kernel does it, the checksum is valid and equal
    // to the one a full computation gives.
    Bytes completed = complete_partial_checksum(r.output);
    auto report = verify_checksums(completed);
    EXPECT_TRUE(report.ok()) << report.describe();
    EXPECT_EQ(completed, b_out.build()) << hex_diff(b_out.build(), completed);

    // A partial reply (the WAN side may be a local stack too) is translated
    // back the same way.
    auto b_back = from_wan(v6, wan, nat);
    Bytes back = partial(l4(b_back, c.kind, false, port, sport));
    auto rr = expect_nat("partial, reply", back, wan_if(), XDP_REDIRECT, std::nullopt, false);
    auto b_back_out = to_lan(v6, wan, lan);
    l4(b_back_out, c.kind, false, kClientPort, sport);
    Bytes back_expected = partial(b_back_out);
    EXPECT_EQ(rr.output, back_expected) << hex_diff(back_expected, rr.output);
    auto back_report = verify_checksums(complete_partial_checksum(rr.output));
    EXPECT_TRUE(back_report.ok()) << back_report.describe();
}

// The same flow with complete checksums stays complete (the control case).
TEST_P(NatPartialChecksumTest, CompleteChecksumStaysComplete) {
    const auto& c = GetParam();
    const bool v6 = c.v6;
    const uint16_t sport = c.kind == L4Kind::tcp ? 80 : 53;
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    auto b_in = from_lan(v6, lan_host(v6), wan_host(v6));
    auto r = expect_nat("complete, outbound", l4(b_in, c.kind, true, kClientPort, sport).build(), lan_if(),
                        XDP_REDIRECT, std::nullopt);
    auto b_out = to_wan(v6, wan_addr(v6), wan_host(v6));
    Bytes expected = l4(b_out, c.kind, true, frame_sport(r.output), sport).build();
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
}

INSTANTIATE_TEST_SUITE_P(
    Nat, NatPartialChecksumTest,
    ::testing::Values(PartialCase{"ipv4_tcp", false, L4Kind::tcp}, PartialCase{"ipv4_udp", false, L4Kind::udp},
                      PartialCase{"ipv6_tcp", true, L4Kind::tcp}, PartialCase{"ipv6_udp", true, L4Kind::udp}),
    [](const ::testing::TestParamInfo<PartialCase>& info) { return std::string(info.param.name); });

// Destination NAT changes the destination port too; partial input still
// leaves with only the pseudo-header sum.
class NatPartialChecksumDnatTest : public NatTest {};

TEST_F(NatPartialChecksumDnatTest, PortForwardWithPartialChecksum) {
    ASSERT_TRUE(apply_nat(kPortForwardsYaml));
    Bytes in =
        partial(std::move(from_wan(false, wan_host(false), wan_addr(false)).udp(41000, 5353).payload_pattern(33)));
    auto r = expect_nat(
        "partial, port forward", in, wan_if(), XDP_REDIRECT,
        partial(std::move(to_lan(false, wan_host(false), lan_host(false)).udp(41000, 53).payload_pattern(33))), false);
    auto report = verify_checksums(complete_partial_checksum(r.output));
    EXPECT_TRUE(report.ok()) << report.describe();
}

}  // namespace
}  // namespace sluice::test
