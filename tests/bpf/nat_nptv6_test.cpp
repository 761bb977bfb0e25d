// NPTv6 (RFC 6296): the inside prefix is swapped for the outside one and one
// 16-bit word outside the prefix absorbs the difference, so the address's
// one's-complement sum, and every checksum over it, is unchanged: the output
// differs from the input in the address only, the L4 checksum field is the
// same bytes. The expected address is computed in the test from the RFC.
//
// Only 2001:2::/48 is used for addresses, so two distinct /48 prefixes (the
// RFC's bits 48-63 case) cannot be formed; the /56 and /64 cases cover the
// "longer than /48" rule, the /56 one with a prefix ending inside a 16-bit word.
#include "nat_env.h"

namespace sluice::test {
namespace {

const Ipv6Prefix kInside64 = Ipv6Prefix::of(Ipv6Addr::parse("2001:2:0:1::"), 64);
const Ipv6Prefix kOutside64 = Ipv6Prefix::of(Ipv6Addr::parse("2001:2:0:200::"), 64);
const Ipv6Prefix kInside56 = Ipv6Prefix::of(Ipv6Addr::parse("2001:2::"), 56);
const Ipv6Prefix kOutside56 = Ipv6Prefix::of(Ipv6Addr::parse("2001:2:0:4200::"), 56);

// nat.nptv6 with one { inside, outside } pair.
std::string nptv6_config(const Ipv6Prefix& inside, const Ipv6Prefix& outside) {
    return "nat: { nptv6: [ { inside: \"" + inside.str() + "\", outside: \"" + outside.str() + "\" } ] }\n";
}

uint16_t addr_sum(const Ipv6Addr& a) {
    return ones_sum(a.bytes.data(), 16);
}

struct NptCase {
    const char* name;
    Ipv6Prefix inside, outside;
};
void PrintTo(const NptCase& c, std::ostream* os) {
    *os << c.name;
}

class NatNptv6Test : public NatTest, public ::testing::WithParamInterface<NptCase> {};

TEST_P(NatNptv6Test, PrefixTranslatedBothWaysChecksumNeutral) {
    const auto& c = GetParam();
    ASSERT_TRUE(apply_nat(nptv6_config(c.inside, c.outside)));
    const Ipv6Addr lan6 = Ipv6Addr::parse(lan_host(true));
    const Ipv6Addr mapped = nptv6_map(lan6, c.inside, c.outside);
    const std::string lan = lan6.str(), out = mapped.str(), wan = wan_host(true);
    ASSERT_NE(lan, out);
    ASSERT_EQ(addr_sum(mapped), addr_sum(lan6)) << "the test's own RFC 6296 mapping is not neutral";

    // Outbound flows of every kind: source prefix swapped, checksum field unchanged.
    for (L4Kind kind : {L4Kind::udp, L4Kind::tcp, L4Kind::echo}) {
        SCOPED_TRACE(l4_name(kind));
        const uint16_t sport = kind == L4Kind::tcp ? 80 : kind == L4Kind::udp ? 53 : 0;
        Bytes in = request(from_lan(true, lan, wan), kind, true, 41000, sport);
        auto r = expect_nat("outbound", in, lan_if(), XDP_REDIRECT,
                            request(to_wan(true, out, wan), kind, true, 41000, sport));
        EXPECT_EQ(l4_checksum_field(r.output), l4_checksum_field(in)) << "NPTv6 must not touch the L4 checksum";
        auto s = session(true, lan, wan, request_ports(kind, 41000, sport).first,
                         request_ports(kind, 41000, sport).second, l4_protocol(kind, true));
        ASSERT_TRUE(s);
        EXPECT_EQ(s->nat.flags, SESSION_NAT_SRC);
        // The reply goes back to the inside address.
        Bytes back = response(from_wan(true, wan, out), kind, true, sport, 41000);
        auto rr = expect_nat("reply", back, wan_if(), XDP_REDIRECT,
                             response(to_lan(true, wan, lan), kind, true, sport, 41000));
        EXPECT_EQ(l4_checksum_field(rr.output), l4_checksum_field(back));
    }
    EXPECT_EQ(reservations(), 0u) << "NPTv6 holds no ports";

    // Inbound: a new flow to the mapped address reaches exactly the inside
    // host (server-in permits only that address), through nat_map_in.
    auto syn = [](PacketBuilder b) { return b.tcp(50000, 80).seq(9).syn().build(); };
    Bytes in = syn(from_wan(true, wan, out));
    auto r = expect_nat("inbound", in, wan_if(), XDP_REDIRECT, syn(to_lan(true, wan, lan)));
    EXPECT_EQ(l4_checksum_field(r.output), l4_checksum_field(in));
    auto synack = [](PacketBuilder b) { return b.tcp(80, 50000).seq(1).ack_seq(10).syn().ack().build(); };
    expect_nat("inbound flow's reply", synack(from_lan(true, lan, wan)), lan_if(), XDP_REDIRECT,
               synack(to_wan(true, out, wan)));
}

INSTANTIATE_TEST_SUITE_P(Nat, NatNptv6Test,
                         ::testing::Values(NptCase{"prefix_64", kInside64, kOutside64},
                                           NptCase{"prefix_56", kInside56, kOutside56}),
                         [](const ::testing::TestParamInfo<NptCase>& info) { return std::string(info.param.name); });

class NatNptv6EdgeTest : public NatTest {};

// The first interface-identifier word is 0xffff: the next word takes the adjustment.
TEST_F(NatNptv6EdgeTest, AdjustmentSkipsAnAllOnesWord) {
    ASSERT_TRUE(apply_nat(nptv6_config(kInside64, kOutside64)));
    const Ipv6Addr src = Ipv6Addr::parse("2001:2:0:1:ffff:1234::10");
    const Ipv6Addr mapped = nptv6_map(src, kInside64, kOutside64);
    EXPECT_EQ(mapped.bytes[8], 0xff);
    EXPECT_EQ(mapped.bytes[9], 0xff);
    Bytes in = from_lan(true, src.str(), wan_host(true)).udp(41000, 53).payload_pattern(16).build();
    auto r = expect_nat("outbound", in, lan_if(), XDP_REDIRECT,
                        to_wan(true, mapped.str(), wan_host(true)).udp(41000, 53).payload_pattern(16).build());
    EXPECT_EQ(l4_checksum_field(r.output), l4_checksum_field(in));
}

// An adjusted word that would be 0xffff is written as 0x0000 (RFC 6296 3.5).
TEST_F(NatNptv6EdgeTest, AdjustedAllOnesBecomesZero) {
    ASSERT_TRUE(apply_nat(nptv6_config(kInside64, kOutside64)));
    // Choose word 4 so that word + adjustment == 0xffff.
    Ipv6Addr probe = Ipv6Addr::parse("2001:2:0:1::10");
    Ipv6Addr probe_out = nptv6_map(probe, kInside64, kOutside64);  // word 4 was 0: it now holds the adjustment
    uint16_t adj = static_cast<uint16_t>(probe_out.bytes[8] << 8 | probe_out.bytes[9]);
    ASSERT_NE(adj, 0);
    uint16_t w = static_cast<uint16_t>(~adj);
    Ipv6Addr src = probe;
    src.bytes[8] = static_cast<uint8_t>(w >> 8);
    src.bytes[9] = static_cast<uint8_t>(w);
    const Ipv6Addr expected = Ipv6Addr::parse("2001:2:0:200::10");  // word 4: 0x0000, not 0xffff
    EXPECT_EQ(nptv6_map(src, kInside64, kOutside64).str(), expected.str());
    Bytes in = from_lan(true, src.str(), wan_host(true)).udp(41000, 53).build();
    expect_nat("outbound", in, lan_if(), XDP_REDIRECT,
               to_wan(true, expected.str(), wan_host(true)).udp(41000, 53).build());
}

// An ICMPv6 error about an NPTv6 flow: the outer destination and the quoted
// source go back to the inside prefix; the ICMPv6 checksum, over both, is
// unchanged too.
TEST_F(NatNptv6EdgeTest, ErrorAboutTranslatedFlow) {
    ASSERT_TRUE(apply_nat(nptv6_config(kInside64, kOutside64)));
    const Ipv6Addr lan6 = Ipv6Addr::parse(lan_host(true));
    const std::string lan = lan6.str(), out = nptv6_map(lan6, kInside64, kOutside64).str(), wan = wan_host(true);
    auto r = expect_nat("flow", from_lan(true, lan, wan).udp(41000, 53).payload_pattern(20).build(), lan_if(),
                        XDP_REDIRECT, to_wan(true, out, wan).udp(41000, 53).payload_pattern(20).build());
    Bytes sent(r.output.begin() + 14, r.output.end());
    Bytes orig = to_wan(true, lan, wan).udp(41000, 53).payload_pattern(20).build();
    Bytes original(orig.begin() + 14, orig.end());
    Bytes in = from_wan(true, wan_router(true), out).icmpv6_error(3, 0, sent).build();
    auto er = expect_nat("time exceeded", in, wan_if(), XDP_REDIRECT,
                         to_lan(true, wan_router(true), lan).icmpv6_error(3, 0, original).build());
    EXPECT_EQ(l4_checksum_field(er.output), l4_checksum_field(in));
    auto inner = quoted_frame(er.output);
    ASSERT_TRUE(inner);
    auto report = verify_checksums(*inner);
    EXPECT_TRUE(report.ok()) << report.describe();
}

// An interface identifier of all ones cannot absorb the adjustment: dropped
// and counted, in both directions, nothing left behind.
TEST_F(NatNptv6EdgeTest, UnmappableAddressIsDropped) {
    ASSERT_TRUE(apply_nat(nptv6_config(kInside64, kOutside64)));
    expect_nat("outbound from ...:ffff:ffff:ffff:ffff",
               from_lan(true, "2001:2:0:1:ffff:ffff:ffff:ffff", wan_host(true)).udp(41000, 53).build(), lan_if(),
               XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NPTV6_UNMAPPABLE));
    snapshot_stats();
    expect_nat("inbound to ...:ffff:ffff:ffff:ffff",
               from_wan(true, wan_host(true), "2001:2:0:200:ffff:ffff:ffff:ffff").udp(41000, 53).build(), wan_if(),
               XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NPTV6_UNMAPPABLE));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V6)), 0u);
}

}  // namespace
}  // namespace sluice::test
