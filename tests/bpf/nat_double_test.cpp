// A flow translated both ways: a port forward from the WAN whose source is
// also translated to lan0's own address (so the inside server answers the
// firewall). Both session entries change source and destination; the reply
// and an ICMP error from the server are translated back completely.
#include "nat_env.h"

namespace sluice::test {
namespace {

class NatDoubleTest : public NatTest {
protected:
    static std::string lan_addr(bool v6) { return v6 ? NetnsFixture::kLanAddr6 : NetnsFixture::kLanAddr4; }
    // Port forwards to the LAN host, whose flows also leave with lan0's own
    // address (the inside server answers the firewall).
    void setup() {
        ASSERT_TRUE(apply_nat(std::string(kPortForwardsYaml) + R"yaml(
  source:
    - { name: wan-in, from: untrust, to: trust, translate: interface }
)yaml"));
    }
    void tcp_case(bool v6);
    void icmp_error_case(bool v6);
};

void NatDoubleTest::tcp_case(bool v6) {
    ASSERT_NO_FATAL_FAILURE(setup());
    const std::string pub = wan_addr(v6), lan = lan_host(v6), wan = wan_host(v6), fw = lan_addr(v6);
    auto syn = [](PacketBuilder b, uint16_t sp, uint16_t dp) { return b.tcp(sp, dp).seq(10).syn().build(); };
    auto synack = [](PacketBuilder b, uint16_t sp, uint16_t dp) {
        return b.tcp(sp, dp).seq(20).ack_seq(11).syn().ack().build();
    };
    auto r = expect_nat("SYN", syn(from_wan(v6, wan, pub), 50000, 8080), wan_if(), XDP_REDIRECT, std::nullopt);
    const uint16_t port = frame_sport(r.output);
    EXPECT_GE(port, kIfaddrPortFirst);
    EXPECT_LE(port, kIfaddrPortLast);
    Bytes expected = syn(to_lan(v6, fw, lan), port, 80);
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);

    auto init = session(v6, wan, pub, 50000, 8080, proto::kTcp);
    ASSERT_TRUE(init);
    EXPECT_EQ(init->nat.flags, SESSION_NAT_SRC | SESSION_NAT_DST | SESSION_NAT_PORT_HELD);
    auto reply = session(v6, lan, fw, 80, port, proto::kTcp);
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->nat.flags, SESSION_NAT_SRC | SESSION_NAT_DST);
    EXPECT_EQ(addr_text(reply->nat.new_src_addr, v6), pub);
    EXPECT_EQ(port_of(reply->nat.new_src_port), 8080);
    EXPECT_EQ(addr_text(reply->nat.new_dst_addr, v6), wan);
    EXPECT_EQ(port_of(reply->nat.new_dst_port), 50000);
    auto held = reservation(v6, fw, port, proto::kTcp);
    ASSERT_TRUE(held);
    EXPECT_EQ(addr_text(held->inside_addr, v6), wan) << "the reservation names the flow's original source";

    expect_nat("SYN-ACK", synack(from_lan(v6, lan, fw), 80, port), lan_if(), XDP_REDIRECT,
               synack(to_wan(v6, pub, wan), 8080, 50000));
}

void NatDoubleTest::icmp_error_case(bool v6) {
    ASSERT_NO_FATAL_FAILURE(setup());
    const std::string pub = wan_addr(v6), lan = lan_host(v6), wan = wan_host(v6), fw = lan_addr(v6);
    auto query = [](PacketBuilder b, uint16_t sp, uint16_t dp) { return b.udp(sp, dp).payload_pattern(30).build(); };
    auto r = expect_nat("query", query(from_wan(v6, wan, pub), 41000, 5353), wan_if(), XDP_REDIRECT, std::nullopt);
    const uint16_t port = frame_sport(r.output);
    Bytes expected = query(to_lan(v6, fw, lan), port, 53);
    ASSERT_EQ(r.output, expected) << hex_diff(expected, r.output);

    // The server has nothing on 53: its error, about the packet it got, must
    // reach the WAN client as an error about the packet the client sent.
    Bytes received(r.output.begin() + 14, r.output.end());
    Bytes as_sent_frame = query(to_lan(v6, wan, pub), 41000, 5353);
    Bytes as_sent(as_sent_frame.begin() + 14, as_sent_frame.end());
    auto error = [&](PacketBuilder b, const Bytes& quoted) {
        return (v6 ? b.icmpv6_error(1, 4, quoted) : b.icmp_error(3, 3, quoted)).build();
    };
    snapshot_stats();
    auto er = expect_nat("port unreachable from the server", error(from_lan(v6, lan, fw), received), lan_if(),
                         XDP_REDIRECT, error(to_wan(v6, pub, wan), as_sent));
    EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 1);
    auto inner = quoted_frame(er.output);
    ASSERT_TRUE(inner);
    auto report = verify_checksums(*inner);
    EXPECT_TRUE(report.ok()) << report.describe();
    auto f = parse_frame(*inner);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, wan);
    EXPECT_EQ(f->dst_ip, pub);
    EXPECT_EQ(f->sport, 41000);
    EXPECT_EQ(f->dport, 5353);
}

TEST_F(NatDoubleTest, Ipv4PortForwardWithSourceNat) {
    tcp_case(false);
}
TEST_F(NatDoubleTest, Ipv6PortForwardWithSourceNat) {
    tcp_case(true);
}
TEST_F(NatDoubleTest, Ipv4ErrorFromServerAboutDoublyTranslatedFlow) {
    icmp_error_case(false);
}
TEST_F(NatDoubleTest, Ipv6ErrorFromServerAboutDoublyTranslatedFlow) {
    icmp_error_case(true);
}

}  // namespace
}  // namespace sluice::test
