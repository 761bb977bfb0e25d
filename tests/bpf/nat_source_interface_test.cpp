// Source NAT to the egress interface's address (masquerade), IPv4 and NAT66:
// the first packet leaves with wan0's address and a random port (RFC 6056)
// from the interface's range, reserved in nat_ports; the reply is translated
// back to the LAN host exactly; the flow's next packet keeps the port.
#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40001;

struct SnatCase {
    const char* name;
    bool v6;
    L4Kind kind;
};
void PrintTo(const SnatCase& c, std::ostream* os) {
    *os << c.name;
}

uint16_t server_port(L4Kind k) {
    return k == L4Kind::tcp ? 80 : k == L4Kind::udp ? 53 : 0;
}

class NatSourceInterfaceTest : public NatTest, public ::testing::WithParamInterface<SnatCase> {};

TEST_P(NatSourceInterfaceTest, TranslatesToInterfaceAddressAndBack) {
    const auto& c = GetParam();
    const bool v6 = c.v6;
    const uint8_t proto = l4_protocol(c.kind, v6);
    const uint16_t sport = server_port(c.kind);
    const std::string lan = lan_host(v6), wan = wan_host(v6), nat = wan_addr(v6);
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));

    // First packet: translated source, random port in range.
    Bytes in = request(from_lan(v6, lan, wan), c.kind, v6, kClientPort, sport);
    auto r = run(in, lan_if());
    ASSERT_EQ(xdp_verdict_name(r.retval), "XDP_REDIRECT") << describe_delta(stats_delta());
    const uint16_t port = frame_sport(r.output);
    EXPECT_GE(port, kIfaddrPortFirst);
    EXPECT_LE(port, kIfaddrPortLast);
    Bytes expected = request(to_wan(v6, nat, wan), c.kind, v6, port, sport);
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
    auto report = verify_checksums(r.output);
    EXPECT_TRUE(report.ok()) << report.describe();
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 1);
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), 1);

    // Both session entries say how to translate their direction.
    auto [is, id] = request_ports(c.kind, kClientPort, sport);
    auto init = session(v6, lan, wan, is, id, proto);
    ASSERT_TRUE(init) << "no initiator entry keyed by the original tuple";
    EXPECT_EQ(init->nat.flags, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    EXPECT_EQ(addr_text(init->nat.new_src_addr, v6), nat);
    EXPECT_EQ(port_of(init->nat.new_src_port), port);
    EXPECT_EQ(addr_text(init->nat.new_dst_addr, v6), wan);
    EXPECT_EQ(port_of(init->nat.new_dst_port), id);
    auto [rs, rd] = response_ports(c.kind, sport, port);
    auto reply = session(v6, wan, nat, rs, rd, proto);
    ASSERT_TRUE(reply) << "no reply entry keyed by the reverse of the translated tuple";
    EXPECT_EQ(reply->nat.flags, SESSION_NAT_DST);
    EXPECT_EQ(addr_text(reply->nat.new_dst_addr, v6), lan);
    EXPECT_EQ(port_of(reply->nat.new_dst_port), kClientPort);

    // The reservation.
    auto held = reservation(v6, nat, port, proto);
    ASSERT_TRUE(held) << "nat_ports has no reservation for port " << port;
    EXPECT_EQ(addr_text(held->inside_addr, v6), lan);
    EXPECT_EQ(port_of(held->inside_port), kClientPort);
    EXPECT_EQ(reservations(), 1u);

    // The reply goes back to the LAN host's original address and port / id.
    snapshot_stats();
    expect_nat("reply", response(from_wan(v6, wan, nat), c.kind, v6, sport, port), wan_if(), XDP_REDIRECT,
               response(to_lan(v6, wan, lan), c.kind, v6, sport, kClientPort));
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 1);
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), 0);

    // The flow's next packet keeps its translation.
    Bytes next_in, next_out;
    if (c.kind == L4Kind::tcp) {
        next_in = from_lan(v6, lan, wan).tcp(kClientPort, sport).seq(1001).ack_seq(7001).ack().payload("GET /").build();
        next_out = to_wan(v6, nat, wan).tcp(port, sport).seq(1001).ack_seq(7001).ack().payload("GET /").build();
    } else {
        next_in = request(from_lan(v6, lan, wan), c.kind, v6, kClientPort, sport);
        next_out = request(to_wan(v6, nat, wan), c.kind, v6, port, sport);
    }
    expect_nat("the flow's second packet", next_in, lan_if(), XDP_REDIRECT, next_out);
    EXPECT_EQ(reservations(), 1u);
    if (c.kind == L4Kind::tcp) {
        // State changes reach the other entry through the translated keys.
        auto i2 = session(v6, lan, wan, kClientPort, sport, proto);
        auto r2 = session(v6, wan, nat, sport, port, proto);
        ASSERT_TRUE(i2 && r2);
        EXPECT_EQ(i2->tcp_state, TCP_SESSION_ESTABLISHED);
        EXPECT_EQ(r2->tcp_state, TCP_SESSION_ESTABLISHED);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Nat, NatSourceInterfaceTest,
    ::testing::Values(SnatCase{"ipv4_tcp", false, L4Kind::tcp}, SnatCase{"ipv4_udp", false, L4Kind::udp},
                      SnatCase{"ipv4_icmp_echo", false, L4Kind::echo}, SnatCase{"ipv6_tcp", true, L4Kind::tcp},
                      SnatCase{"ipv6_udp", true, L4Kind::udp}, SnatCase{"ipv6_icmpv6_echo", true, L4Kind::echo}),
    [](const ::testing::TestParamInfo<SnatCase>& info) { return std::string(info.param.name); });

class NatSourceInterfaceMiscTest : public NatTest {
protected:
    void SetUp() override {
        NatTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    }
};

// A tagged frame from lan0.100 leaves wan0 untagged and translated.
TEST_F(NatSourceInterfaceMiscTest, TaggedIngressIsTranslatedAndUntagged) {
    for (bool v6 : {false, true}) {
        PacketBuilder b;
        b.eth(kLanHostMac, lan_mac()).vlan(100);
        if (v6)
            b.ipv6(lan_host(v6), wan_host(v6)).hop_limit(64);
        else
            b.ipv4(lan_host(v6), wan_host(v6)).ttl(64);
        auto r = expect_nat(v6 ? "IPv6 tagged" : "IPv4 tagged", b.udp(41000, 53).payload_pattern(20).build(), lan_if(),
                            XDP_REDIRECT, std::nullopt);
        const uint16_t port = frame_sport(r.output);
        Bytes expected = to_wan(v6, wan_addr(v6), wan_host(v6)).udp(port, 53).payload_pattern(20).build();
        EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
    }
}

// The L4 header behind IPv6 extension headers is found and translated.
TEST_F(NatSourceInterfaceMiscTest, Ipv6BehindExtensionHeaders) {
    auto build = [](PacketBuilder b, uint16_t sport) {
        return b.hop_by_hop().destination_options().tcp(sport, 80).seq(3).syn().build();
    };
    auto r =
        expect_nat("SYN behind hop-by-hop and destination options",
                   build(from_lan(true, lan_host(true), wan_host(true)), 41000), lan_if(), XDP_REDIRECT, std::nullopt);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f && f->l4_present);
    Bytes expected = build(to_wan(true, wan_addr(true), wan_host(true)), f->sport);
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
}

}  // namespace
}  // namespace sluice::test
