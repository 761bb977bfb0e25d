// Permitted flows: forwarding (MAC rewrite, TTL, redirect), sessions and the
// TCP state machine; traffic the session table must refuse.
#include "datapath_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40000;

class ForwardTest : public DatapathTest {
protected:
    void run_handshake(bool v6);
};

// The output of a forwarded IPv4 packet is the input with new MACs and TTL - 1,
// so its header checksum must still verify (incremental update done right).
void expect_valid_checksums(const XdpRunResult& r) {
    auto report = verify_checksums(r.output);
    EXPECT_TRUE(report.ok()) << report.describe() << "\n" << summarize_frame(r.output);
}

TEST_F(ForwardTest, Tcp4SynLanToWanIsRedirectedWithSession) {
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1000).syn().window(64240).build(); };
    auto r = expect_fixture({"IPv4 SYN lan->wan :80", syn(lan_to_wan4()), lan_if(), XDP_REDIRECT,
                             syn(lan_to_wan4_out())});
    expect_valid_checksums(r);
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp);
    auto rev = session4(kWanHost4, kLanHost4, 80, kClientPort, proto::kTcp);
    ASSERT_TRUE(fwd) << "no forward session entry";
    ASSERT_TRUE(rev) << "no reply session entry";
    EXPECT_EQ(fwd->tcp_state, TCP_SESSION_SYN_SENT);
    EXPECT_FALSE(fwd->flags & SESSION_F_REPLY);
    EXPECT_TRUE(rev->flags & SESSION_F_REPLY);
    EXPECT_EQ(fwd->zone_in, rev->zone_out);
    EXPECT_EQ(count_entries(env_->map_fd("sessions_v4")), 2u);
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1);
    EXPECT_EQ(stat_change(STAT_FORWARD), 1);
}

TEST_F(ForwardTest, Tcp6SynLanToWanIsRedirectedWithSession) {
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1000).syn().build(); };
    auto r = expect_fixture({"IPv6 SYN lan->wan :80", syn(lan_to_wan6()), lan_if(), XDP_REDIRECT,
                             syn(lan_to_wan6_out())});
    expect_valid_checksums(r);
    EXPECT_TRUE(session6(kLanHost6, kWanHost6, kClientPort, 80, proto::kTcp));
    EXPECT_TRUE(session6(kWanHost6, kLanHost6, 80, kClientPort, proto::kTcp));
    EXPECT_EQ(count_entries(env_->map_fd("sessions_v6")), 2u);
}

TEST_F(ForwardTest, Tcp4Port8080IsPermitted) {
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 8080).seq(1).syn().build(); };
    expect_fixture({"IPv4 SYN lan->wan :8080", syn(lan_to_wan4()), lan_if(), XDP_REDIRECT, syn(lan_to_wan4_out())});
}

// SYN, SYN-ACK, ACK, data: each redirected to the other side, state ESTABLISHED.
void ForwardTest::run_handshake(bool v6) {
    auto in_l = [&] { return v6 ? lan_to_wan6() : lan_to_wan4(); };
    auto out_l = [&] { return v6 ? lan_to_wan6_out() : lan_to_wan4_out(); };
    auto in_w = [&] { return v6 ? wan_to_lan6() : wan_to_lan4(); };
    auto out_w = [&] { return v6 ? wan_to_lan6_out() : wan_to_lan4_out(); };
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1000).syn().build(); };
    auto synack = [](PacketBuilder b) { return b.tcp(80, kClientPort).seq(5000).ack_seq(1001).syn().ack().build(); };
    auto ack = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1001).ack_seq(5001).ack().build(); };
    auto data = [](PacketBuilder b) {
        return b.tcp(kClientPort, 80).seq(1001).ack_seq(5001).ack().psh().payload("GET / HTTP/1.0\r\n\r\n").build();
    };
    std::vector<Fixture> steps = {
        {"SYN lan->wan", syn(in_l()), lan_if(), XDP_REDIRECT, syn(out_l())},
        {"SYN-ACK wan->lan", synack(in_w()), wan_if(), XDP_REDIRECT, synack(out_w())},
        {"ACK lan->wan", ack(in_l()), lan_if(), XDP_REDIRECT, ack(out_l())},
        {"data lan->wan", data(in_l()), lan_if(), XDP_REDIRECT, data(out_l())},
    };
    for (const auto& step : steps) {
        auto r = expect_fixture(step);
        auto report = verify_checksums(r.output);
        EXPECT_TRUE(report.ok()) << step.description << ": " << report.describe();
    }
}

TEST_F(ForwardTest, Tcp4HandshakeAndDataReachEstablished) {
    run_handshake(false);
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp);
    auto rev = session4(kWanHost4, kLanHost4, 80, kClientPort, proto::kTcp);
    ASSERT_TRUE(fwd && rev);
    EXPECT_EQ(fwd->tcp_state, TCP_SESSION_ESTABLISHED);
    EXPECT_EQ(rev->tcp_state, TCP_SESSION_ESTABLISHED);
    EXPECT_EQ(fwd->packets, 3u);
    EXPECT_EQ(rev->packets, 1u);
    EXPECT_EQ(stat_change(STAT_SESSION_HIT), 3);
    EXPECT_EQ(stat_change(STAT_FORWARD), 4);
}

TEST_F(ForwardTest, Tcp6HandshakeAndDataReachEstablished) {
    run_handshake(true);
    auto fwd = session6(kLanHost6, kWanHost6, kClientPort, 80, proto::kTcp);
    auto rev = session6(kWanHost6, kLanHost6, 80, kClientPort, proto::kTcp);
    ASSERT_TRUE(fwd && rev);
    EXPECT_EQ(fwd->tcp_state, TCP_SESSION_ESTABLISHED);
    EXPECT_EQ(rev->tcp_state, TCP_SESSION_ESTABLISHED);
}

TEST_F(ForwardTest, Tcp4UnsolicitedSynFromWanIsDenied) {
    Bytes syn = wan_to_lan4().tcp(80, kClientPort).seq(1).syn().build();
    expect_fixture({"IPv4 SYN wan->lan, no session", syn, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
    EXPECT_EQ(count_entries(env_->map_fd("sessions_v4")), 0u);
}

TEST_F(ForwardTest, Tcp6UnsolicitedSynFromWanIsDenied) {
    Bytes syn = wan_to_lan6().tcp(80, kClientPort).seq(1).syn().build();
    expect_fixture({"IPv6 SYN wan->lan, no session", syn, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
}

TEST_F(ForwardTest, Tcp4SynFromResponderOnSessionIsInvalid) {
    run(lan_to_wan4().tcp(kClientPort, 80).seq(1000).syn().build(), lan_if());
    snapshot_stats();
    Bytes bad = wan_to_lan4().tcp(80, kClientPort).seq(7).syn().build();
    expect_fixture({"IPv4 SYN from the responder of an open session", bad, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_TCP_INVALID));
}

TEST_F(ForwardTest, Tcp6SynFromResponderOnSessionIsInvalid) {
    run(lan_to_wan6().tcp(kClientPort, 80).seq(1000).syn().build(), lan_if());
    snapshot_stats();
    Bytes bad = wan_to_lan6().tcp(80, kClientPort).seq(7).syn().build();
    expect_fixture({"IPv6 SYN from the responder of an open session", bad, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_TCP_INVALID));
}

TEST_F(ForwardTest, Tcp4AckWithoutSessionIsDropped) {
    Bytes ack = lan_to_wan4().tcp(kClientPort, 80).seq(1001).ack_seq(5001).ack().build();
    expect_fixture({"IPv4 ACK lan->wan, no session", ack, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_TCP_NO_SESSION));
    EXPECT_EQ(count_entries(env_->map_fd("sessions_v4")), 0u);
}

TEST_F(ForwardTest, Tcp6AckWithoutSessionIsDropped) {
    Bytes ack = lan_to_wan6().tcp(kClientPort, 80).seq(1001).ack_seq(5001).ack().build();
    expect_fixture({"IPv6 ACK lan->wan, no session", ack, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_TCP_NO_SESSION));
}

TEST_F(ForwardTest, Udp4DnsQueryAndAnswer) {
    auto query = [](PacketBuilder b) { return b.udp(5353, 53).payload_pattern(32).build(); };
    auto answer = [](PacketBuilder b) { return b.udp(53, 5353).payload_pattern(64, 0x40).build(); };
    expect_fixture({"IPv4 DNS query lan->wan", query(lan_to_wan4()), lan_if(), XDP_REDIRECT, query(lan_to_wan4_out())});
    expect_fixture({"IPv4 DNS answer wan->lan", answer(wan_to_lan4()), wan_if(), XDP_REDIRECT,
                    answer(wan_to_lan4_out())});
    EXPECT_TRUE(session4(kLanHost4, kWanHost4, 5353, 53, proto::kUdp));
}

TEST_F(ForwardTest, Udp6DnsQueryAndAnswer) {
    auto query = [](PacketBuilder b) { return b.udp(5353, 53).payload_pattern(32).build(); };
    auto answer = [](PacketBuilder b) { return b.udp(53, 5353).payload_pattern(64, 0x40).build(); };
    expect_fixture({"IPv6 DNS query lan->wan", query(lan_to_wan6()), lan_if(), XDP_REDIRECT, query(lan_to_wan6_out())});
    expect_fixture({"IPv6 DNS answer wan->lan", answer(wan_to_lan6()), wan_if(), XDP_REDIRECT,
                    answer(wan_to_lan6_out())});
    EXPECT_TRUE(session6(kLanHost6, kWanHost6, 5353, 53, proto::kUdp));
}

}  // namespace
}  // namespace sluice::test
