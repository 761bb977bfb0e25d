// reject / deny / default-deny. A reject answer is compared byte for byte with
// the packet the builder makes from RFC 9293 §3.10.7.1 (RST) and RFC 792 /
// RFC 4443 (destination unreachable, administratively prohibited), and its
// checksums are verified by the independent parser.
#include "datapath_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40000;

class RejectTest : public DatapathTest {
protected:
    void expect_answer_valid(const XdpRunResult& r) {
        auto report = verify_checksums(r.output);
        EXPECT_TRUE(report.ok()) << report.describe() << "\n" << summarize_frame(r.output);
    }
};

TEST_F(RejectTest, Tcp4Port81GetsRst) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 81).seq(1000).syn().build();
    Bytes rst = PacketBuilder()
                    .eth(lan_mac(), kLanHostMac)
                    .ipv4(kWanHost4, kLanHost4).ttl(64).dont_fragment()
                    .tcp(81, kClientPort).seq(0).ack_seq(1001).flags(tcp_flag::kRst | tcp_flag::kAck).window(0)
                    .build();
    auto r = expect_fixture({"IPv4 SYN to rejected tcp/81", syn, lan_if(), XDP_TX, rst});
    expect_answer_valid(r);
    EXPECT_EQ(stat_change(STAT_REJECT_TCP_RST), 1);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_REJECT));
    EXPECT_EQ(count_entries(env_->map_fd("sessions_v4")), 0u);
}

TEST_F(RejectTest, Tcp4SynWithPayloadRstAcksThePayload) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 81).seq(0xfffffff0).syn().payload_pattern(20).build();
    Bytes rst = PacketBuilder()
                    .eth(lan_mac(), kLanHostMac)
                    .ipv4(kWanHost4, kLanHost4).ttl(64).dont_fragment()
                    .tcp(81, kClientPort).seq(0).ack_seq(0xfffffff0u + 1 + 20)  // wraps
                    .flags(tcp_flag::kRst | tcp_flag::kAck).window(0)
                    .build();
    auto r = expect_fixture({"IPv4 SYN+20 bytes to rejected tcp/81", syn, lan_if(), XDP_TX, rst});
    expect_answer_valid(r);
}

TEST_F(RejectTest, Tcp6Port81GetsRst) {
    Bytes syn = lan_to_wan6().tcp(kClientPort, 81).seq(1000).syn().build();
    Bytes rst = PacketBuilder()
                    .eth(lan_mac(), kLanHostMac)
                    .ipv6(kWanHost6, kLanHost6).hop_limit(64)
                    .tcp(81, kClientPort).seq(0).ack_seq(1001).flags(tcp_flag::kRst | tcp_flag::kAck).window(0)
                    .build();
    auto r = expect_fixture({"IPv6 SYN to rejected tcp/81", syn, lan_if(), XDP_TX, rst});
    expect_answer_valid(r);
    EXPECT_EQ(stat_change(STAT_REJECT_TCP_RST), 1);
}

TEST_F(RejectTest, Udp4Port54GetsIcmpAdminProhibited) {
    // 48-byte datagram: quoted whole (the answer quotes at most 548 bytes).
    Bytes query = lan_to_wan4().ip_id(77).udp(kClientPort, 54).payload_pattern(20).build();
    Bytes original_ip = lan_to_wan4().ip_id(77).udp(kClientPort, 54).payload_pattern(20).build_ip();
    Bytes icmp = PacketBuilder()
                     .eth(lan_mac(), kLanHostMac)
                     .ipv4(kWanHost4, kLanHost4).ttl(64)
                     .icmp_error(3, 13, original_ip)
                     .build();
    auto r = expect_fixture({"IPv4 UDP to rejected udp/54", query, lan_if(), XDP_TX, icmp});
    expect_answer_valid(r);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, kWanHost4.str()) << "the answer comes from the original destination";
    EXPECT_EQ(stat_change(STAT_REJECT_ICMP), 1);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_REJECT));
}

TEST_F(RejectTest, Udp4LargeDatagramQuoteFitsIn576) {
    Bytes query = lan_to_wan4().udp(kClientPort, 54).payload_pattern(1000).build();
    Bytes original_ip = lan_to_wan4().udp(kClientPort, 54).payload_pattern(1000).build_ip();
    auto r = run(query, lan_if());
    ASSERT_EQ(r.retval, XDP_TX) << xdp_verdict_name(r.retval);
    expect_answer_valid(r);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f);
    size_t ip_len = r.output.size() - f->l3_offset;
    EXPECT_LE(ip_len, 576u) << "an ICMPv4 error should fit the minimum reassembly size";
    EXPECT_GE(ip_len, 20u + 8 + 20 + 8) << "must quote the IP header and 8 bytes of L4";
    size_t quoted = ip_len - 28;
    Bytes expected = PacketBuilder()
                         .eth(lan_mac(), kLanHostMac)
                         .ipv4(kWanHost4, kLanHost4).ttl(64)
                         .icmp_error(3, 13, quote(original_ip, quoted))
                         .build();
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
}

TEST_F(RejectTest, Udp6Port54GetsIcmpv6AdminProhibited) {
    Bytes query = lan_to_wan6().udp(kClientPort, 54).payload_pattern(20).build();
    Bytes original_ip = lan_to_wan6().udp(kClientPort, 54).payload_pattern(20).build_ip();
    Bytes icmp = PacketBuilder()
                     .eth(lan_mac(), kLanHostMac)
                     .ipv6(kWanHost6, kLanHost6).hop_limit(64)
                     .icmpv6_error(1, 1, original_ip)
                     .build();
    auto r = expect_fixture({"IPv6 UDP to rejected udp/54", query, lan_if(), XDP_TX, icmp});
    expect_answer_valid(r);
    EXPECT_EQ(stat_change(STAT_REJECT_ICMP), 1);
}

TEST_F(RejectTest, Udp6LargeDatagramAnswerIsAtMost1280) {
    Bytes query = lan_to_wan6().udp(kClientPort, 54).payload_pattern(1400).build();
    Bytes original_ip = lan_to_wan6().udp(kClientPort, 54).payload_pattern(1400).build_ip();
    Bytes icmp = PacketBuilder()
                     .eth(lan_mac(), kLanHostMac)
                     .ipv6(kWanHost6, kLanHost6).hop_limit(64)
                     .icmpv6_error(1, 1, quote(original_ip, 1280 - 48))
                     .build();
    auto r = expect_fixture({"IPv6 1448-byte UDP to rejected udp/54", query, lan_if(), XDP_TX, icmp});
    expect_answer_valid(r);
    EXPECT_EQ(r.output.size() - 14, 1280u);
}

TEST_F(RejectTest, Tcp4Port82IsDeniedSilently) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 82).seq(1).syn().build();
    expect_fixture({"IPv4 SYN to denied tcp/82", syn, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
}

TEST_F(RejectTest, Tcp6Port82IsDeniedSilently) {
    Bytes syn = lan_to_wan6().tcp(kClientPort, 82).seq(1).syn().build();
    expect_fixture({"IPv6 SYN to denied tcp/82", syn, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
}

TEST_F(RejectTest, Tcp4UnlistedPortHitsDefaultDeny) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 9999).seq(1).syn().build();
    expect_fixture({"IPv4 SYN to tcp/9999 (no policy)", syn, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DEFAULT));
}

TEST_F(RejectTest, Udp6UnlistedPortHitsDefaultDeny) {
    Bytes dgram = lan_to_wan6().udp(kClientPort, 9999).payload("x").build();
    expect_fixture({"IPv6 UDP to udp/9999 (no policy)", dgram, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DEFAULT));
}

TEST_F(RejectTest, DeniedFlowRepeatIsServedFromFlowCache) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 82).seq(1).syn().build();
    run(syn, lan_if());
    snapshot_stats();
    expect_fixture({"IPv4 SYN to denied tcp/82, again", syn, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
    EXPECT_EQ(stat_change(STAT_FLOW_CACHE_HIT), 1);
}

}  // namespace
}  // namespace sluice::test
