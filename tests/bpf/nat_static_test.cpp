// Static 1:1 NAT: an inside host (or prefix) is its outside address both
// ways. Outbound flows leave with the outside source (ports kept, nothing
// reserved); inbound flows to the outside address reach the inside host;
// replies are translated back in both cases.
#include "nat_env.h"

namespace sluice::test {
namespace {

class NatStaticTest : public NatTest {
protected:
    // nat.static { inside, outside_prefix }, inside covering the LAN host,
    // whose outside address is `outside`.
    void both_directions(bool v6, const std::string& inside, const std::string& outside_prefix,
                         const std::string& outside);
};

void NatStaticTest::both_directions(bool v6, const std::string& inside, const std::string& outside_prefix,
                                    const std::string& outside) {
    const std::string lan = lan_host(v6), wan = wan_host(v6);
    ASSERT_TRUE(
        apply_nat("nat: { static: [ { inside: \"" + inside + "\", outside: \"" + outside_prefix + "\" } ] }\n"));

    // Outbound: the source becomes the outside address, the port stays.
    auto query = [&](PacketBuilder b) { return b.udp(41000, 53).payload_pattern(30).build(); };
    auto answer = [&](PacketBuilder b) { return b.udp(53, 41000).payload_pattern(90, 3).build(); };
    expect_nat("outbound", query(from_lan(v6, lan, wan)), lan_if(), XDP_REDIRECT, query(to_wan(v6, outside, wan)));
    auto init = session(v6, lan, wan, 41000, 53, proto::kUdp);
    ASSERT_TRUE(init);
    EXPECT_EQ(init->nat.flags, SESSION_NAT_SRC) << "static NAT holds no port";
    EXPECT_EQ(reservations(), 0u);
    EXPECT_TRUE(session(v6, wan, outside, 53, 41000, proto::kUdp)) << "reply entry";
    expect_nat("outbound flow's reply", answer(from_wan(v6, wan, outside)), wan_if(), XDP_REDIRECT,
               answer(to_lan(v6, wan, lan)));

    // Inbound: a new flow to the outside address reaches the inside host
    // (server-in permits only the inside address).
    auto syn = [&](PacketBuilder b) { return b.tcp(50000, 80).seq(5).syn().build(); };
    auto synack = [&](PacketBuilder b) { return b.tcp(80, 50000).seq(77).ack_seq(6).syn().ack().build(); };
    snapshot_stats();
    expect_nat("inbound", syn(from_wan(v6, wan, outside)), wan_if(), XDP_REDIRECT, syn(to_lan(v6, wan, lan)));
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 1);
    auto in = session(v6, wan, outside, 50000, 80, proto::kTcp);
    ASSERT_TRUE(in);
    EXPECT_EQ(in->nat.flags, SESSION_NAT_DST);
    expect_nat("inbound flow's reply", synack(from_lan(v6, lan, wan)), lan_if(), XDP_REDIRECT,
               synack(to_wan(v6, outside, wan)));
}

TEST_F(NatStaticTest, Ipv4HostBothDirections) {
    both_directions(false, "198.18.1.10", "198.18.100.50", "198.18.100.50");
}
TEST_F(NatStaticTest, Ipv6HostBothDirections) {
    both_directions(true, "2001:2:0:1::10", "2001:2:0:100::50", "2001:2:0:100::50");
}
// A prefix maps host to host, keeping the host bits.
TEST_F(NatStaticTest, Ipv4PrefixBothDirections) {
    both_directions(false, "198.18.1.0/24", "198.18.101.0/24", "198.18.101.10");
}
TEST_F(NatStaticTest, Ipv6PrefixBothDirections) {
    both_directions(true, "2001:2:0:1::/64", "2001:2:0:101::/64", "2001:2:0:101::10");
}

// Host bits of other hosts are kept too.
TEST_F(NatStaticTest, Ipv4PrefixKeepsHostBits) {
    ASSERT_TRUE(apply_nat("nat: { static: [ { inside: 198.18.1.0/24, outside: 198.18.101.0/24 } ] }\n"));
    for (int host : {1, 77, 254}) {
        std::string src = "198.18.1." + std::to_string(host), out = "198.18.101." + std::to_string(host);
        expect_nat(src, from_lan(false, src, wan_host(false)).udp(41000, 53).payload_pattern(8).build(), lan_if(),
                   XDP_REDIRECT, to_wan(false, out, wan_host(false)).udp(41000, 53).payload_pattern(8).build());
    }
}

// Static mappings come before source rules: the mapped host keeps its
// outside address, other hosts get the interface address.
TEST_F(NatStaticTest, StaticBeforeSourceRules) {
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  static:
    - { inside: 198.18.1.10, outside: 198.18.100.50 }
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
)yaml"));
    expect_nat("the static host", from_lan(false, lan_host(false), wan_host(false)).udp(41000, 53).build(), lan_if(),
               XDP_REDIRECT, to_wan(false, "198.18.100.50", wan_host(false)).udp(41000, 53).build());
    auto r = expect_nat("another host", from_lan(false, "198.18.1.11", wan_host(false)).udp(41000, 53).build(),
                        lan_if(), XDP_REDIRECT, std::nullopt);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, wan_addr(false));
    EXPECT_GE(f->sport, kIfaddrPortFirst);
    EXPECT_LE(f->sport, kIfaddrPortLast);
    EXPECT_EQ(reservations(), 1u);
}

}  // namespace
}  // namespace sluice::test
