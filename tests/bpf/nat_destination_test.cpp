// Destination NAT (port forward): a flow to the firewall's WAN address and a
// public port reaches the LAN host's address and port; policy and route see
// the translated destination; the reply leaves from the public address and
// port. Lookup order: exact port, then any port, then any protocol.
#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kRemotePort = 50000;

class NatDestinationTest : public NatTest {
protected:
    void port_forward_case(bool v6);
};

void NatDestinationTest::port_forward_case(bool v6) {
    const std::string pub = wan_addr(v6), lan = lan_host(v6), wan = wan_host(v6);
    ASSERT_TRUE(apply_nat(kPortForwardsYaml));

    auto syn = [&](PacketBuilder b, uint16_t dport) {
        return b.tcp(kRemotePort, dport).seq(100).syn().tcp_options({2, 4, 5, 0xb4}).build();
    };
    auto synack = [&](PacketBuilder b, uint16_t sport) {
        return b.tcp(sport, kRemotePort).seq(900).ack_seq(101).syn().ack().build();
    };
    expect_nat("SYN to the public port", syn(from_wan(v6, wan, pub), 8080), wan_if(), XDP_REDIRECT,
               syn(to_lan(v6, wan, lan), 80));
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 1);
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), 0);
    EXPECT_EQ(reservations(), 0u) << "destination NAT reserves no port";

    auto init = session(v6, wan, pub, kRemotePort, 8080, proto::kTcp);
    ASSERT_TRUE(init);
    EXPECT_EQ(init->nat.flags, SESSION_NAT_DST);
    EXPECT_EQ(addr_text(init->nat.new_dst_addr, v6), lan);
    EXPECT_EQ(port_of(init->nat.new_dst_port), 80);
    EXPECT_EQ(addr_text(init->nat.new_src_addr, v6), wan);
    EXPECT_EQ(port_of(init->nat.new_src_port), kRemotePort);
    EXPECT_EQ(init->zone_out, trust_) << "routed by the translated destination";
    auto reply = session(v6, lan, wan, 80, kRemotePort, proto::kTcp);
    ASSERT_TRUE(reply) << "no reply entry keyed by the translated tuple reversed";
    EXPECT_EQ(reply->nat.flags, SESSION_NAT_SRC);
    EXPECT_EQ(addr_text(reply->nat.new_src_addr, v6), pub);
    EXPECT_EQ(port_of(reply->nat.new_src_port), 8080);

    snapshot_stats();
    expect_nat("SYN-ACK from the LAN host", synack(from_lan(v6, lan, wan), 80), lan_if(), XDP_REDIRECT,
               synack(to_wan(v6, pub, wan), 8080));
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 1);
    expect_nat("ACK with data",
               from_wan(v6, wan, pub)
                   .tcp(kRemotePort, 8080)
                   .seq(101)
                   .ack_seq(901)
                   .ack()
                   .payload("GET / HTTP/1.0\r\n\r\n")
                   .build(),
               wan_if(), XDP_REDIRECT,
               to_lan(v6, wan, lan)
                   .tcp(kRemotePort, 80)
                   .seq(101)
                   .ack_seq(901)
                   .ack()
                   .payload("GET / HTTP/1.0\r\n\r\n")
                   .build());
}

TEST_F(NatDestinationTest, Ipv4PortForward) {
    port_forward_case(false);
}
TEST_F(NatDestinationTest, Ipv6PortForward) {
    port_forward_case(true);
}

// server-in permits only the LAN host's port 80: translating to another
// address, or to another port, must be denied. Without the rules these
// packets would go to the firewall itself (pass-local), so a policy drop
// shows policy saw the translated destination.
TEST_F(NatDestinationTest, PolicySeesTheTranslatedAddress) {
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  destination:
    - { name: web-in, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.20, port: 80 } }
)yaml"));
    expect_nat("to a LAN address the policy does not permit",
               from_wan(false, wan_host(false), wan_addr(false)).tcp(kRemotePort, 8080).syn().build(), wan_if(),
               XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 0u);
}

TEST_F(NatDestinationTest, PolicySeesTheTranslatedPort) {
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  destination:
    - { name: web-in, from: untrust, destination: "2001:2:0:100::1", protocol: tcp, port: 80,
        translate-to: { address: "2001:2:0:1::10", port: 8080 } }
)yaml"));
    expect_nat("to a port the policy does not permit",
               from_wan(true, wan_host(true), wan_addr(true)).tcp(kRemotePort, 80).syn().build(), wan_if(), XDP_DROP,
               std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V6)), 0u);
}

// Without a rule, the same packet is for the firewall itself: host-inbound
// judges it, and the WAN zone allows nothing.
TEST_F(NatDestinationTest, WithoutARuleThePacketIsLocal) {
    expect_nat("no rule", from_wan(false, wan_host(false), wan_addr(false)).tcp(kRemotePort, 8080).syn().build(),
               wan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HOST_INBOUND));
}

// Exact port first, then the protocol's any-port rule, then any protocol;
// a rule with no port keeps the destination port.
TEST_F(NatDestinationTest, LookupOrderAndPortKeeping) {
    const bool v6 = false;
    const std::string pub = wan_addr(v6), lan = lan_host(v6), wan = wan_host(v6);
    // 198.18.1.20 is a LAN address policy does not let the WAN reach.
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  destination:
    - { name: exact, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.10, port: 80 } }
    - { name: any-tcp-port, from: untrust, destination: 198.18.100.1, protocol: tcp,
        translate-to: { address: 198.18.1.20 } }
    - { name: any-udp-port, from: untrust, destination: 198.18.100.1, protocol: udp,
        translate-to: { address: 198.18.1.10 } }
    - { name: any-protocol, from: untrust, destination: 198.18.100.1, translate-to: { address: 198.18.1.10 } }
)yaml"));

    expect_nat("exact TCP port", from_wan(v6, wan, pub).tcp(kRemotePort, 8080).syn().build(), wan_if(), XDP_REDIRECT,
               to_lan(v6, wan, lan).tcp(kRemotePort, 80).syn().build());
    snapshot_stats();
    expect_nat("other TCP port → the any-port rule", from_wan(v6, wan, pub).tcp(kRemotePort, 80).syn().build(),
               wan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
    expect_nat("UDP, port kept", from_wan(v6, wan, pub).udp(kRemotePort, 53).payload_pattern(20).build(), wan_if(),
               XDP_REDIRECT, to_lan(v6, wan, lan).udp(kRemotePort, 53).payload_pattern(20).build());
    expect_nat("echo → the any-protocol rule",
               from_wan(v6, wan, pub).icmp_echo_request(0x3344, 1).payload_pattern(24).build(), wan_if(), XDP_REDIRECT,
               to_lan(v6, wan, lan).icmp_echo_request(0x3344, 1).payload_pattern(24).build());
    expect_nat("echo reply from the LAN host",
               from_lan(v6, lan, wan).icmp_echo_reply(0x3344, 1).payload_pattern(24).build(), lan_if(), XDP_REDIRECT,
               to_wan(v6, pub, wan).icmp_echo_reply(0x3344, 1).payload_pattern(24).build());
}

TEST_F(NatDestinationTest, Ipv6EchoToTheAnyProtocolRule) {
    const bool v6 = true;
    const std::string pub = wan_addr(v6), lan = lan_host(v6), wan = wan_host(v6);
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  destination:
    - { name: any-protocol, from: untrust, destination: "2001:2:0:100::1", translate-to: { address: "2001:2:0:1::10" } }
)yaml"));
    expect_nat("echo request", from_wan(v6, wan, pub).icmpv6_echo_request(0x3344, 1).payload_pattern(24).build(),
               wan_if(), XDP_REDIRECT, to_lan(v6, wan, lan).icmpv6_echo_request(0x3344, 1).payload_pattern(24).build());
    expect_nat("echo reply", from_lan(v6, lan, wan).icmpv6_echo_reply(0x3344, 1).payload_pattern(24).build(), lan_if(),
               XDP_REDIRECT, to_wan(v6, pub, wan).icmpv6_echo_reply(0x3344, 1).payload_pattern(24).build());
}

// A rule is for the zone the flow arrives from: the same destination from
// the LAN side is not translated.
TEST_F(NatDestinationTest, RuleOfAnotherZoneDoesNotApply) {
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  destination:
    - { name: wan-host-dns, from: untrust, destination: 198.18.100.200, protocol: udp, port: 53,
        translate-to: { address: 198.18.1.20, port: 53 } }
)yaml"));
    Bytes in = from_lan(false, lan_host(false), wan_host(false)).udp(41000, 53).payload_pattern(20).build();
    expect_nat("lan → wan host :53, rule is for untrust", in, lan_if(), XDP_REDIRECT,
               to_wan(false, lan_host(false), wan_host(false)).udp(41000, 53).payload_pattern(20).build());
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 0);
}

}  // namespace
}  // namespace sluice::test
