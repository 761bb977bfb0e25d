// Cases around the edges of the spec: frames as real stacks send them
// (Ethernet padding, IPv4 options, tagged rejects), the rest of the TCP state
// machine (FIN, RST, reuse), and link-scope traffic.
#include "datapath_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40000;

class EdgeTest : public DatapathTest {
protected:
    // Ethernet pads frames to 60 bytes; the padding is not part of the datagram.
    static Bytes pad_to(Bytes frame, size_t len) {
        if (frame.size() < len) frame.resize(len, 0);
        return frame;
    }
    void handshake4() {
        ASSERT_EQ(run(lan_to_wan4().tcp(kClientPort, 80).seq(1000).syn().build(), lan_if()).retval, XDP_REDIRECT);
        ASSERT_EQ(run(wan_to_lan4().tcp(80, kClientPort).seq(5000).ack_seq(1001).syn().ack().build(), wan_if()).retval,
                  XDP_REDIRECT);
        ASSERT_EQ(run(lan_to_wan4().tcp(kClientPort, 80).seq(1001).ack_seq(5001).ack().build(), lan_if()).retval,
                  XDP_REDIRECT);
    }
    uint8_t tcp_state4() {
        auto s = session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp);
        return s ? s->tcp_state : 0xff;
    }
};

TEST_F(EdgeTest, PaddedMinimumFrameIsForwardedWithItsPadding) {
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1).syn().build(); };
    expect_fixture({"IPv4 SYN padded to 60 bytes", pad_to(syn(lan_to_wan4()), 60), lan_if(), XDP_REDIRECT,
                    pad_to(syn(lan_to_wan4_out()), 60)});
}

TEST_F(EdgeTest, RstForPaddedSynAcksOnlyTheDatagram) {
    Bytes syn = pad_to(lan_to_wan4().tcp(kClientPort, 81).seq(1000).syn().build(), 60);
    Bytes rst = PacketBuilder()
                    .eth(lan_mac(), kLanHostMac)
                    .ipv4(kWanHost4, kLanHost4).ttl(64).dont_fragment()
                    .tcp(81, kClientPort).seq(0).ack_seq(1001).flags(tcp_flag::kRst | tcp_flag::kAck).window(0)
                    .build();
    expect_fixture({"IPv4 SYN padded to 60 bytes to rejected tcp/81", syn, lan_if(), XDP_TX, rst});
}

TEST_F(EdgeTest, Ipv4OptionsAreForwardedWithValidChecksum) {
    // Router alert (RFC 2113) + NOP padding.
    auto syn = [](PacketBuilder b) {
        return b.ip_options({0x94, 0x04, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00}).tcp(kClientPort, 80).seq(1).syn().build();
    };
    auto r = expect_fixture({"IPv4 SYN with options", syn(lan_to_wan4()), lan_if(), XDP_REDIRECT, syn(lan_to_wan4_out())});
    EXPECT_TRUE(verify_checksums(r.output).ok()) << verify_checksums(r.output).describe();
}

TEST_F(EdgeTest, TtlDecrementKeepsChecksumValidAcrossManyHeaders) {
    // The incremental TTL update must agree with a full recomputation for
    // every header, including ones whose checksum carries around.
    for (uint16_t id = 0; id < 64; ++id) {
        uint16_t ip_id = static_cast<uint16_t>(id * 1021 + 0xfe00);
        auto syn = [&](PacketBuilder b) { return b.ip_id(ip_id).tcp(kClientPort, 80).seq(1).syn().build(); };
        auto r = run(syn(lan_to_wan4(static_cast<uint8_t>(2 + id * 3))), lan_if());
        ASSERT_EQ(r.retval, XDP_REDIRECT);
        auto report = verify_checksums(r.output);
        ASSERT_TRUE(report.ok()) << "ip id " << ip_id << ": " << report.describe();
    }
}

TEST_F(EdgeTest, TaggedRejectKeepsTheTag) {
    Bytes syn = PacketBuilder().eth(kLanHostMac, lan_mac()).vlan(100).ipv4(kLanHost4, kWanHost4)
                    .tcp(kClientPort, 81).seq(1000).syn().build();
    Bytes rst = PacketBuilder()
                    .eth(lan_mac(), kLanHostMac).vlan(100)
                    .ipv4(kWanHost4, kLanHost4).ttl(64).dont_fragment()
                    .tcp(81, kClientPort).seq(0).ack_seq(1001).flags(tcp_flag::kRst | tcp_flag::kAck).window(0)
                    .build();
    expect_fixture({"IPv4 SYN tagged vid 100 to rejected tcp/81", syn, lan_if(), XDP_TX, rst});
}

TEST_F(EdgeTest, TaggedUdpRejectKeepsTheTag) {
    auto udp = [](PacketBuilder b) { return b.udp(kClientPort, 54).payload_pattern(20).build(); };
    auto udp_ip = [](PacketBuilder b) { return b.udp(kClientPort, 54).payload_pattern(20).build_ip(); };
    Bytes in = udp(std::move(PacketBuilder().eth(kLanHostMac, lan_mac()).vlan(100).ipv6(kLanHost6, kWanHost6)));
    Bytes quoted = udp_ip(std::move(PacketBuilder().ipv6(kLanHost6, kWanHost6)));
    Bytes icmp = PacketBuilder()
                     .eth(lan_mac(), kLanHostMac).vlan(100)
                     .ipv6(kWanHost6, kLanHost6).hop_limit(64)
                     .icmpv6_error(1, 1, quoted)
                     .build();
    auto r = expect_fixture({"IPv6 UDP tagged vid 100 to rejected udp/54", in, lan_if(), XDP_TX, icmp});
    EXPECT_TRUE(verify_checksums(r.output).ok()) << verify_checksums(r.output).describe();
}

TEST_F(EdgeTest, IcmpErrorFromLanHostAboutReplyIsRelated) {
    Bytes query = lan_to_wan4().udp(5353, 53).payload_pattern(16).build();
    ASSERT_EQ(run(query, lan_if()).retval, XDP_REDIRECT);
    // The host got the answer after its socket closed: port unreachable back to the server.
    Bytes answer_ip = wan_to_lan4_out().udp(53, 5353).payload_pattern(16).build_ip();
    auto err = [&](PacketBuilder b) { return b.icmp_error(3, 3, quote(answer_ip, 28)).build(); };
    snapshot_stats();
    auto out = std::move(PacketBuilder().eth(wan_mac(), kWanHostMac).ipv4(kLanHost4, kWanHost4).ttl(63));
    expect_fixture({"ICMP port unreachable lan->wan about the answer", err(lan_to_wan4()), lan_if(), XDP_REDIRECT,
                    err(std::move(out))});
    EXPECT_EQ(stat_change(STAT_ICMP_RELATED), 1);
}

TEST_F(EdgeTest, InitiatorDataBeforeSynAckIsInvalid) {
    ASSERT_EQ(run(lan_to_wan4().tcp(kClientPort, 80).seq(1000).syn().build(), lan_if()).retval, XDP_REDIRECT);
    snapshot_stats();
    Bytes early = lan_to_wan4().tcp(kClientPort, 80).seq(1001).ack_seq(1).ack().payload("x").build();
    expect_fixture({"IPv4 data before the SYN-ACK", early, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_TCP_INVALID));
}

TEST_F(EdgeTest, SynAckFromInitiatorIsInvalid) {
    ASSERT_EQ(run(lan_to_wan4().tcp(kClientPort, 80).seq(1000).syn().build(), lan_if()).retval, XDP_REDIRECT);
    snapshot_stats();
    Bytes bogus = lan_to_wan4().tcp(kClientPort, 80).seq(1000).ack_seq(1).syn().ack().build();
    expect_fixture({"IPv4 SYN-ACK from the initiator", bogus, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_TCP_INVALID));
}

TEST_F(EdgeTest, FinExchangeReachesTimeWait) {
    handshake4();
    ASSERT_EQ(tcp_state4(), TCP_SESSION_ESTABLISHED);
    auto fin_l = lan_to_wan4().tcp(kClientPort, 80).seq(1001).ack_seq(5001).fin().ack().build();
    auto fin_w = wan_to_lan4().tcp(80, kClientPort).seq(5001).ack_seq(1002).fin().ack().build();
    auto last = lan_to_wan4().tcp(kClientPort, 80).seq(1002).ack_seq(5002).ack().build();
    EXPECT_EQ(run(fin_l, lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(tcp_state4(), TCP_SESSION_FIN_WAIT);
    EXPECT_EQ(run(fin_w, wan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(tcp_state4(), TCP_SESSION_CLOSING);
    EXPECT_EQ(run(last, lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(tcp_state4(), TCP_SESSION_TIME_WAIT);
}

TEST_F(EdgeTest, RstClosesAndNewSynReopens) {
    handshake4();
    Bytes rst = wan_to_lan4().tcp(80, kClientPort).seq(5001).rst().ack().ack_seq(1001).build();
    EXPECT_EQ(run(rst, wan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(tcp_state4(), TCP_SESSION_CLOSED);
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(9000).syn().build(); };
    snapshot_stats();
    expect_fixture({"IPv4 new SYN on a closed tuple", syn(lan_to_wan4()), lan_if(), XDP_REDIRECT,
                    syn(lan_to_wan4_out())});
    EXPECT_EQ(tcp_state4(), TCP_SESSION_SYN_SENT);
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1);
}

TEST_F(EdgeTest, NeighbourSolicitationGoesToKernel) {
    // To the solicited-node multicast address of 2001:2:0:1::1.
    const auto& target = Ipv6Addr::parse(NetnsFixture::kLanAddr6).bytes;
    Bytes ns_frame = PacketBuilder()
                         .eth(kLanHostMac, Mac::parse("33:33:ff:00:00:01"))
                         .ipv6(kLanHost6, Ipv6Addr::parse("ff02::1:ff00:1")).hop_limit(255)
                         .icmpv6(135, 0, 0)
                         .payload(Bytes(target.begin(), target.end()))
                         .build();
    expect_fixture({"IPv6 neighbour solicitation", ns_frame, lan_if(), XDP_PASS, ns_frame});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_LINK_LOCAL));
}

TEST_F(EdgeTest, SessionCountersFollowPackets) {
    handshake4();
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp);
    auto rev = session4(kWanHost4, kLanHost4, 80, kClientPort, proto::kTcp);
    ASSERT_TRUE(fwd && rev);
    EXPECT_EQ(fwd->packets, 2u);
    EXPECT_EQ(fwd->bytes, 80u) << "two 40-byte datagrams (L3 length)";
    EXPECT_EQ(rev->packets, 1u);
    EXPECT_TRUE(rev->flags & SESSION_F_SEEN_REPLY);
}


TEST_F(EdgeTest, EcnSetupSynIsPermitted) {
    // SYN with ECE and CWR (RFC 3168 ECN negotiation).
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1).flags(0xc2).build(); };
    expect_fixture({"IPv4 ECN-setup SYN", syn(lan_to_wan4()), lan_if(), XDP_REDIRECT, syn(lan_to_wan4_out())});
}

TEST_F(EdgeTest, FragmentedAnswerFollowsTheReplyEntry) {
    ASSERT_EQ(run(lan_to_wan4().udp(5353, 53).payload_pattern(16).build(), lan_if()).retval, XDP_REDIRECT);
    auto first = [](PacketBuilder b) {
        return b.ip_id(0x7777).more_fragments().udp(53, 5353).udp_length(200).payload_pattern(96).build();
    };
    auto later = [](PacketBuilder b) {
        return b.ip_id(0x7777).frag_offset(104).protocol(proto::kUdp).payload_pattern(96, 96).build();
    };
    expect_fixture({"IPv4 first fragment of the DNS answer", first(wan_to_lan4()), wan_if(), XDP_REDIRECT,
                    first(wan_to_lan4_out())});
    expect_fixture({"IPv4 later fragment of the DNS answer", later(wan_to_lan4()), wan_if(), XDP_REDIRECT,
                    later(wan_to_lan4_out())});
}

TEST_F(EdgeTest, TimeExceededAboutEchoRequestIsRelated) {
    // ICMP traceroute: a router answers the request with time exceeded.
    auto req = [](PacketBuilder b) { return b.icmp_echo_request(0x1234, 3).payload_pattern(32).build(); };
    ASSERT_EQ(run(req(lan_to_wan4()), lan_if()).retval, XDP_REDIRECT);
    Bytes quoted = quote(lan_to_wan4_out().icmp_echo_request(0x1234, 3).payload_pattern(32).build_ip(), 28);
    auto err = [&](PacketBuilder b) { return b.icmp_error(11, 0, quoted).build(); };
    auto in = std::move(PacketBuilder().eth(kWanHostMac, wan_mac()).ipv4(kWanRouter4, kLanHost4).ttl(64));
    auto out = std::move(PacketBuilder().eth(lan_mac(), kLanHostMac).ipv4(kWanRouter4, kLanHost4).ttl(63));
    expect_fixture({"ICMP time exceeded about an echo request", err(std::move(in)), wan_if(), XDP_REDIRECT,
                    err(std::move(out))});
}

TEST_F(EdgeTest, Icmpv6ErrorQuotingExtensionHeadersIsRelated) {
    // The session's packets carry a destination-options header; a router's
    // error quotes it as sent, so the quoted tuple sits behind that header.
    auto syn = [](PacketBuilder b) { return b.destination_options().tcp(kClientPort, 80).seq(1).syn().build(); };
    ASSERT_EQ(run(syn(lan_to_wan6()), lan_if()).retval, XDP_REDIRECT);
    Bytes quoted = lan_to_wan6_out().destination_options().tcp(kClientPort, 80).seq(1).syn().build_ip();
    auto err = [&](PacketBuilder b) { return b.icmpv6_error(3, 0, quoted).build(); };
    auto in = std::move(PacketBuilder().eth(kWanHostMac, wan_mac()).ipv6(kWanRouter6, kLanHost6).hop_limit(64));
    auto out = std::move(PacketBuilder().eth(lan_mac(), kLanHostMac).ipv6(kWanRouter6, kLanHost6).hop_limit(63));
    expect_fixture({"ICMPv6 time exceeded quoting a SYN behind destination options", err(std::move(in)), wan_if(),
                    XDP_REDIRECT, err(std::move(out))});
}

}  // namespace
}  // namespace sluice::test
