// Source NAT left to tc_egress_prog: XDP hands a packet of a source-NAT flow
// to the kernel untranslated when it cannot redirect it (here: larger than
// the egress MTU, like a GRO aggregate), so the kernel routes and answers the
// real source; on the way out, tc_egress_prog translates it with the flow's
// session (BPF_PROG_TEST_RUN on the TC program with an skb leaving wan0).
#include <linux/pkt_cls.h>

#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40004;
constexpr size_t kBig = 1600;  // over wan0's 1500-byte MTU

struct TcCase {
    const char* name;
    bool v6;
    L4Kind kind;
};
void PrintTo(const TcCase& c, std::ostream* os) {
    *os << c.name;
}

class NatTcEgressTest : public NatTest, public ::testing::WithParamInterface<TcCase> {
protected:
    // Runs tc_egress_prog on a frame leaving through wan0; expects TC_ACT_OK.
    Bytes tc(const Bytes& frame) {
        auto r = run_tc(env_->prog_fd(SLUICE_PROG_TC_EGRESS), frame, wan_if());
        EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
        if (!r.ok()) return {};
        EXPECT_EQ(r.value().retval, TC_ACT_OK);
        return r.value().output;
    }
};

TEST_P(NatTcEgressTest, PacketXdpPassedUntranslatedIsTranslatedOnEgress) {
    const auto& c = GetParam();
    const bool v6 = c.v6;
    const std::string lan = lan_host(v6), wan = wan_host(v6), nat = wan_addr(v6);
    const uint16_t sport = c.kind == L4Kind::tcp ? 80 : c.kind == L4Kind::udp ? 53 : 0;
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));

    // The flow starts on the fast path (translated in XDP).
    auto r = run(request(from_lan(v6, lan, wan), c.kind, v6, kClientPort, sport), lan_if());
    ASSERT_EQ(xdp_verdict_name(r.retval), "XDP_REDIRECT") << describe_delta(stats_delta());
    const uint16_t port = frame_sport(r.output);
    if (c.kind == L4Kind::tcp)
        expect_nat("SYN-ACK", response(from_wan(v6, wan, nat), c.kind, v6, sport, port), wan_if(), XDP_REDIRECT,
                   response(to_lan(v6, wan, lan), c.kind, v6, sport, kClientPort));

    // A packet too big for wan0: XDP passes it to the kernel untranslated.
    auto big = [&](PacketBuilder b, uint16_t cport) {
        switch (c.kind) {
            case L4Kind::tcp:
                b.tcp(cport, sport).seq(1001).ack_seq(7001).ack().psh();
                break;
            case L4Kind::udp:
                b.udp(cport, sport);
                break;
            case L4Kind::echo:
                v6 ? b.icmpv6_echo_request(cport, 9) : b.icmp_echo_request(cport, 9);
                break;
        }
        return b.payload_pattern(kBig, 0x11).build();
    };
    snapshot_stats();
    Bytes in = big(from_lan(v6, lan, wan), kClientPort);
    expect_nat("over-MTU packet", in, lan_if(), XDP_PASS, in);
    EXPECT_EQ(stat_change(STAT_NAT_DEFERRED_TC), 1);
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 0);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_OVER_MTU));

    // The kernel forwards it out of wan0 (new MACs, TTL - 1); tc translates.
    snapshot_stats();
    Bytes leaving = big(to_wan(v6, lan, wan), kClientPort);
    Bytes out = tc(leaving);
    Bytes expected = big(to_wan(v6, nat, wan), port);
    EXPECT_EQ(out, expected) << hex_diff(expected, out);
    auto report = verify_checksums(out);
    EXPECT_TRUE(report.ok()) << report.describe();
    EXPECT_EQ(stat_change(STAT_TC_EGRESS_NAT), 1);
    EXPECT_EQ(stat_change(STAT_TC_EGRESS_SESSION), 1);
}

INSTANTIATE_TEST_SUITE_P(Nat, NatTcEgressTest,
                         ::testing::Values(TcCase{"ipv4_udp", false, L4Kind::udp},
                                           TcCase{"ipv4_tcp", false, L4Kind::tcp},
                                           TcCase{"ipv4_icmp_echo", false, L4Kind::echo},
                                           TcCase{"ipv6_udp", true, L4Kind::udp}, TcCase{"ipv6_tcp", true, L4Kind::tcp},
                                           TcCase{"ipv6_icmpv6_echo", true, L4Kind::echo}),
                         [](const ::testing::TestParamInfo<TcCase>& info) { return std::string(info.param.name); });

class NatTcEgressMiscTest : public NatTest {
protected:
    Bytes tc(const Bytes& frame) {
        auto r = run_tc(env_->prog_fd(SLUICE_PROG_TC_EGRESS), frame, wan_if());
        EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
        if (!r.ok()) return {};
        EXPECT_EQ(r.value().retval, TC_ACT_OK);
        return r.value().output;
    }
};

// IPv4 UDP without a checksum (0) keeps none after translation.
TEST_F(NatTcEgressMiscTest, Ipv4UdpWithoutChecksumStaysWithout) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    const std::string lan = lan_host(false), wan = wan_host(false), nat = wan_addr(false);
    auto r = run(from_lan(false, lan, wan).udp(kClientPort, 53).l4_checksum(0).build(), lan_if());
    ASSERT_EQ(r.retval, XDP_REDIRECT);
    const uint16_t port = frame_sport(r.output);
    EXPECT_EQ(l4_checksum_field(r.output), 0) << "XDP must keep a zero UDP checksum zero";
    Bytes out = tc(to_wan(false, lan, wan).udp(kClientPort, 53).payload_pattern(kBig).l4_checksum(0).build());
    Bytes expected = to_wan(false, nat, wan).udp(port, 53).payload_pattern(kBig).l4_checksum(0).build();
    EXPECT_EQ(out, expected) << hex_diff(expected, out);
}

// A destination-NAT flow's reply entry translates the source: when XDP hands
// the server's answer to the kernel, tc gives it the public address and port.
TEST_F(NatTcEgressMiscTest, PortForwardReplyTranslatedOnEgress) {
    ASSERT_TRUE(apply_nat(kPortForwardsYaml));
    const std::string lan = lan_host(false), wan = wan_host(false), pub = wan_addr(false);
    expect_nat("query", from_wan(false, wan, pub).udp(41000, 5353).build(), wan_if(), XDP_REDIRECT,
               to_lan(false, wan, lan).udp(41000, 53).build());
    snapshot_stats();
    Bytes in = from_lan(false, lan, wan).udp(53, 41000).payload_pattern(kBig).build();
    expect_nat("big answer", in, lan_if(), XDP_PASS, in);
    EXPECT_EQ(stat_change(STAT_NAT_DEFERRED_TC), 1);
    Bytes out = tc(to_wan(false, lan, wan).udp(53, 41000).payload_pattern(kBig).build());
    Bytes expected = to_wan(false, pub, wan).udp(5353, 41000).payload_pattern(kBig).build();
    EXPECT_EQ(out, expected) << hex_diff(expected, out);
    auto report = verify_checksums(out);
    EXPECT_TRUE(report.ok()) << report.describe();
}

// Destination NAT is never left to tc: XDP translates before the kernel routes.
TEST_F(NatTcEgressMiscTest, DestinationNatIsDoneInXdpEvenWhenPassing) {
    ASSERT_TRUE(apply_nat(kPortForwardsYaml));
    const std::string lan = lan_host(false), wan = wan_host(false), pub = wan_addr(false);
    expect_nat("query", from_wan(false, wan, pub).udp(41000, 5353).build(), wan_if(), XDP_REDIRECT,
               to_lan(false, wan, lan).udp(41000, 53).build());
    snapshot_stats();
    expect_nat("big query", from_wan(false, wan, pub).udp(41000, 5353).payload_pattern(kBig).build(), wan_if(),
               XDP_PASS, from_wan(false, wan, lan).udp(41000, 53).payload_pattern(kBig).build());
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 1);
    EXPECT_EQ(stat_change(STAT_NAT_DEFERRED_TC), 0);
}

// The first packet to a WAN address without a resolved neighbour: XDP
// creates the flow (port reserved) but leaves the packet, untranslated, to
// the kernel, which resolves the neighbour; tc translates it on the way out.
TEST_F(NatTcEgressMiscTest, FirstPacketWithoutNeighbourIsTranslatedByTc) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    for (bool v6 : {false, true}) {
        const std::string lan = lan_host(v6), far = v6 ? "2001:2:0:100::201" : "198.18.100.201", nat = wan_addr(v6);
        snapshot_stats();
        Bytes in = from_lan(v6, lan, far).udp(41000, 53).payload_pattern(20).build();
        expect_nat("no neighbour", in, lan_if(), XDP_PASS, in);
        EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_NO_NEIGH));
        EXPECT_EQ(stat_change(STAT_NAT_DEFERRED_TC), 1);
        auto s = session(v6, lan, far, 41000, 53, proto::kUdp);
        ASSERT_TRUE(s);
        ASSERT_EQ(s->nat.flags, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
        const uint16_t port = port_of(s->nat.new_src_port);
        EXPECT_TRUE(reservation(v6, nat, port, proto::kUdp));
        const Mac far_mac = Mac::parse("02:00:00:00:64:c9");
        auto leaving = [&](const std::string& src, uint16_t sport) {
            PacketBuilder b;
            b.eth(wan_mac(), far_mac);
            if (v6)
                b.ipv6(src, far).hop_limit(63);
            else
                b.ipv4(src, far).ttl(63);
            return b.udp(sport, 53).payload_pattern(20).build();
        };
        Bytes out = tc(leaving(lan, 41000));
        Bytes expected = leaving(nat, port);
        EXPECT_EQ(out, expected) << hex_diff(expected, out);
        auto report = verify_checksums(out);
        EXPECT_TRUE(report.ok()) << report.describe();
    }
}

// The kernel answers a packet XDP translated and handed to it (here: its TTL
// runs out) with an ICMP error quoting the packet as the kernel has it,
// translated. Leaving, the error must be translated back like one from
// anywhere else, or the sender cannot match it (and learns the inside address).
TEST_F(NatTcEgressMiscTest, KernelErrorAboutPortForwardedPacketIsTranslatedOnEgress) {
    ASSERT_TRUE(apply_nat(kPortForwardsYaml));
    for (bool v6 : {false, true}) {
        SCOPED_TRACE(v6 ? "IPv6" : "IPv4");
        const std::string lan = lan_host(v6), wan = wan_host(v6), pub = wan_addr(v6);
        auto query = [&](PacketBuilder b, uint8_t ttl, const std::string& dst, uint16_t dport) {
            if (v6)
                b.ipv6(wan, dst).hop_limit(ttl);
            else
                b.ipv4(wan, dst).ttl(ttl);
            return b.udp(41000, dport).payload_pattern(20).build();
        };
        auto from_wan_eth = [&] { return std::move(PacketBuilder().eth(kWanHostMac, wan_mac())); };
        expect_nat("query", query(from_wan_eth(), 64, pub, 5353), wan_if(), XDP_REDIRECT,
                   to_lan(v6, wan, lan).udp(41000, 53).payload_pattern(20).build());
        snapshot_stats();
        // TTL 1: translated, then left to the kernel.
        Bytes handed = query(from_wan_eth(), 1, lan, 53);
        expect_nat("query with TTL 1", query(from_wan_eth(), 1, pub, 5353), wan_if(), XDP_PASS, handed);
        EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_TTL));
        // The kernel's time exceeded, from wan0's address, quoting what it got.
        auto error = [&](const Bytes& quoted) {
            PacketBuilder b;
            b.eth(wan_mac(), kWanHostMac);
            if (v6)
                b.ipv6(pub, wan).hop_limit(64).icmpv6_error(3, 0, quoted);
            else
                b.ipv4(pub, wan).ttl(64).icmp_error(11, 0, quoted);
            return b.build();
        };
        Bytes quoted_in(handed.begin() + 14, handed.end());
        Bytes sent = query(from_wan_eth(), 1, pub, 5353);
        Bytes quoted_out(sent.begin() + 14, sent.end());
        snapshot_stats();
        Bytes out = tc(error(quoted_in));
        Bytes expected = error(quoted_out);
        EXPECT_EQ(out, expected) << hex_diff(expected, out);
        auto report = verify_checksums(out);
        EXPECT_TRUE(report.ok()) << report.describe();
        EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 1);
    }
}

// The same for a source-NAT flow's answer that expires here: the kernel's
// error to the WAN host must quote the answer as sent (to the translated
// address and port), not as translated back to the LAN host.
TEST_F(NatTcEgressMiscTest, KernelErrorAboutSourceNatAnswerIsTranslatedOnEgress) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    for (bool v6 : {false, true}) {
        SCOPED_TRACE(v6 ? "IPv6" : "IPv4");
        const std::string lan = lan_host(v6), wan = wan_host(v6), nat = wan_addr(v6);
        auto r = run(from_lan(v6, lan, wan).udp(41000, 53).build(), lan_if());
        ASSERT_EQ(r.retval, XDP_REDIRECT);
        const uint16_t port = frame_sport(r.output);
        auto answer = [&](const std::string& dst, uint16_t dport) {
            PacketBuilder b;
            b.eth(kWanHostMac, wan_mac());
            if (v6)
                b.ipv6(wan, dst).hop_limit(1);
            else
                b.ipv4(wan, dst).ttl(1);
            return b.udp(53, dport).payload_pattern(30).build();
        };
        Bytes handed = answer(lan, 41000);
        expect_nat("answer with TTL 1", answer(nat, port), wan_if(), XDP_PASS, handed);
        auto error = [&](const Bytes& frame) {
            Bytes quoted(frame.begin() + 14, frame.end());
            PacketBuilder b;
            b.eth(wan_mac(), kWanHostMac);
            if (v6)
                b.ipv6(nat, wan).hop_limit(64).icmpv6_error(3, 0, quoted);
            else
                b.ipv4(nat, wan).ttl(64).icmp_error(11, 0, quoted);
            return b.build();
        };
        Bytes out = tc(error(handed));
        Bytes expected = error(answer(nat, port));
        EXPECT_EQ(out, expected) << hex_diff(expected, out);
        auto report = verify_checksums(out);
        EXPECT_TRUE(report.ok()) << report.describe();
    }
}

// An error XDP already translated but handed to the kernel (here: the LAN
// host's neighbour is unresolved) is not translated again on the way out.
TEST_F(NatTcEgressMiscTest, ErrorXdpTranslatedIsNotTranslatedAgain) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    for (bool v6 : {false, true}) {
        SCOPED_TRACE(v6 ? "IPv6" : "IPv4");
        const std::string host = v6 ? "2001:2:0:1::11" : "198.18.1.11";  // no neighbour entry
        const std::string wan = wan_host(v6), nat = wan_addr(v6), router = wan_router(v6);
        auto r = run(from_lan(v6, host, wan).udp(41000, 53).payload_pattern(10).build(), lan_if());
        ASSERT_EQ(r.retval, XDP_REDIRECT);
        EXPECT_GE(frame_sport(r.output), kIfaddrPortFirst);
        Bytes sent(r.output.begin() + 14, r.output.end());
        Bytes orig_frame = to_wan(v6, host, wan).udp(41000, 53).payload_pattern(10).build();
        Bytes original(orig_frame.begin() + 14, orig_frame.end());
        auto error = [&](PacketBuilder b, const Bytes& quoted) {
            return (v6 ? b.icmpv6_error(3, 0, quoted) : b.icmp_error(11, 0, quoted)).build();
        };
        auto from_router = [&](const std::string& dst) {
            PacketBuilder b;
            b.eth(kWanHostMac, wan_mac());
            if (v6)
                b.ipv6(router, dst).hop_limit(64);
            else
                b.ipv4(router, dst).ttl(64);
            return b;
        };
        snapshot_stats();
        Bytes translated = error(from_router(host), original);
        expect_nat("error, host without neighbour", error(from_router(nat), sent), wan_if(), XDP_PASS, translated);
        EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 1);
        EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_NO_NEIGH));
        // The kernel forwards it out of lan0.
        PacketBuilder out_b;
        out_b.eth(lan_mac(), Mac::parse("02:00:00:00:01:11"));
        if (v6)
            out_b.ipv6(router, host).hop_limit(63);
        else
            out_b.ipv4(router, host).ttl(63);
        Bytes leaving = error(std::move(out_b), original);
        snapshot_stats();
        auto t = run_tc(env_->prog_fd(SLUICE_PROG_TC_EGRESS), leaving, lan_if());
        ASSERT_TRUE(t.ok()) << t.error().message;
        EXPECT_EQ(t.value().retval, TC_ACT_OK);
        EXPECT_EQ(t.value().output, leaving) << hex_diff(leaving, t.value().output);
        EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 0);
    }
}

// Packets of flows without translation go through tc untouched.
TEST_F(NatTcEgressMiscTest, UntranslatedFlowIsLeftAlone) {
    const std::string lan = lan_host(false), wan = wan_host(false);
    expect_nat("flow", from_lan(false, lan, wan).udp(41000, 53).build(), lan_if(), XDP_REDIRECT,
               to_wan(false, lan, wan).udp(41000, 53).build());
    snapshot_stats();
    Bytes leaving = to_wan(false, lan, wan).udp(41000, 53).payload_pattern(kBig).build();
    EXPECT_EQ(tc(leaving), leaving);
    EXPECT_EQ(stat_change(STAT_TC_EGRESS_NAT), 0);
    EXPECT_EQ(stat_change(STAT_TC_EGRESS_SESSION), 1);
}

}  // namespace
}  // namespace sluice::test
