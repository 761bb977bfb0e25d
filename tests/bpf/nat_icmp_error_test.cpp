// ICMP/ICMPv6 errors quoting a translated flow (RFC 5508 section 4.2): the
// error is translated inside and out. For a source-NAT flow, an error from a
// WAN router or from the WAN host goes to the LAN host, and the quoted packet
// shows the LAN host's original address and port (or echo identifier). For a
// destination-NAT flow, an error from the inside server about the
// translated packet leaves with the public address outside and inside, and an
// error from the WAN about the server's reply reaches the server.
//
// Expected frames are built from the untranslated packets (the builder
// computes every checksum from scratch); the quoted packet is also parsed and
// verified on its own (inner IPv4 header, inner L4 when quoted whole).
#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40003;

Bytes strip_eth(const Bytes& frame) {
    return Bytes(frame.begin() + 14, frame.end());
}

struct ErrCase {
    const char* name;
    bool v6;
    L4Kind kind;
    bool from_router;  // time exceeded etc. from a router; else from the WAN host
    uint8_t type, code;
    uint32_t rest;
    size_t quote_len;  // 0: the whole packet
};
void PrintTo(const ErrCase& c, std::ostream* os) {
    *os << c.name;
}

// The error's own checks: everything verifies, the quoted packet parses to
// (src, sport) → (dst, dport) and its checksums verify.
void check_quoted(const Bytes& out, bool v6, const std::string& src, uint16_t sport, const std::string& dst,
                  uint16_t dport, bool whole) {
    auto report = verify_checksums(out);
    EXPECT_TRUE(report.ok()) << "outer: " << report.describe();
    auto inner = quoted_frame(out);
    ASSERT_TRUE(inner) << "no quoted packet in " << summarize_frame(out);
    auto f = parse_frame(*inner);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->ip_version, v6 ? 6 : 4);
    EXPECT_EQ(f->src_ip, src) << "quoted source";
    EXPECT_EQ(f->dst_ip, dst) << "quoted destination";
    ASSERT_TRUE(f->l4_present || f->l4_proto == proto::kTcp);
    if (f->l4_proto == proto::kIcmp || f->l4_proto == proto::kIcmpv6) {
        EXPECT_EQ(f->icmp_id, sport) << "quoted echo identifier";
    } else if (f->l4_present) {
        EXPECT_EQ(f->sport, sport) << "quoted source port";
        EXPECT_EQ(f->dport, dport) << "quoted destination port";
    } else {
        // A TCP header cut at 8 bytes: the ports are its first 4.
        size_t l4 = f->l4_offset;
        ASSERT_GE(inner->size(), l4 + 4);
        EXPECT_EQ((*inner)[l4] << 8 | (*inner)[l4 + 1], sport) << "quoted source port";
        EXPECT_EQ((*inner)[l4 + 2] << 8 | (*inner)[l4 + 3], dport) << "quoted destination port";
    }
    auto ir = verify_checksums(*inner);
    if (whole) {
        EXPECT_TRUE(ir.ok()) << "quoted: " << ir.describe();
        EXPECT_EQ(ir.checked.size(), v6 ? 1u : 2u) << ir.describe();
    } else {
        EXPECT_TRUE(ir.wrong.empty()) << "quoted: " << ir.describe();
        ASSERT_FALSE(ir.checked.empty());
        EXPECT_EQ(ir.checked[0], "ipv4-header");
    }
}

class NatIcmpErrorTest : public NatTest, public ::testing::WithParamInterface<ErrCase> {};

TEST_P(NatIcmpErrorTest, ErrorAboutSourceNatFlowIsTranslatedInsideAndOut) {
    const auto& c = GetParam();
    const bool v6 = c.v6;
    const std::string lan = lan_host(v6), wan = wan_host(v6), nat = wan_addr(v6);
    const std::string origin = c.from_router ? wan_router(v6) : wan;
    const uint16_t sport = c.kind == L4Kind::tcp ? 80 : c.kind == L4Kind::udp ? 53 : 0;
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));

    // The flow; a router error quotes it with the TTL it arrived with (1).
    const uint8_t ttl = c.from_router ? 2 : 64;
    auto lan_b = from_lan(v6, lan, wan);
    if (v6)
        lan_b.hop_limit(ttl);
    else
        lan_b.ttl(ttl);
    auto r = run(request(lan_b, c.kind, v6, kClientPort, sport), lan_if());
    ASSERT_EQ(xdp_verdict_name(r.retval), "XDP_REDIRECT") << describe_delta(stats_delta());
    const uint16_t port = frame_sport(r.output);

    // What the router / host received, and what the LAN host must see quoted:
    // the same packet with its original source.
    Bytes sent = strip_eth(r.output);
    PacketBuilder orig_b;
    orig_b.eth(wan_mac(), kWanHostMac);
    if (v6)
        orig_b.ipv6(lan, wan).hop_limit(ttl - 1);
    else
        orig_b.ipv4(lan, wan).ttl(ttl - 1);
    Bytes original = strip_eth(request(orig_b, c.kind, v6, kClientPort, sport));
    ASSERT_EQ(sent.size(), original.size());
    Bytes quoted_in = c.quote_len ? quote(sent, c.quote_len) : sent;
    Bytes quoted_out = c.quote_len ? quote(original, c.quote_len) : original;

    auto error = [&](PacketBuilder b, const Bytes& quoted) {
        return (v6 ? b.icmpv6_error(c.type, c.code, quoted, c.rest) : b.icmp_error(c.type, c.code, quoted, c.rest))
            .build();
    };
    snapshot_stats();
    auto er = expect_nat(c.name, error(from_wan(v6, origin, nat), quoted_in), wan_if(), XDP_REDIRECT,
                         error(to_lan(v6, origin, lan), quoted_out));
    EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 1);
    EXPECT_EQ(stat_change(STAT_ICMP_RELATED), 1);
    check_quoted(er.output, v6, lan, kClientPort, wan, sport, c.quote_len == 0);
    (void)port;
}

INSTANTIATE_TEST_SUITE_P(
    Nat, NatIcmpErrorTest,
    ::testing::Values(ErrCase{"ipv4_udp_time_exceeded_from_router", false, L4Kind::udp, true, 11, 0, 0, 0},
                      ErrCase{"ipv4_udp_time_exceeded_quote_28", false, L4Kind::udp, true, 11, 0, 0, 28},
                      ErrCase{"ipv4_udp_port_unreachable_from_host", false, L4Kind::udp, false, 3, 3, 0, 0},
                      ErrCase{"ipv4_udp_frag_needed_from_router", false, L4Kind::udp, true, 3, 4, 1400, 0},
                      ErrCase{"ipv4_tcp_time_exceeded_from_router", false, L4Kind::tcp, true, 11, 0, 0, 0},
                      ErrCase{"ipv4_tcp_time_exceeded_quote_28", false, L4Kind::tcp, true, 11, 0, 0, 28},
                      ErrCase{"ipv4_tcp_port_unreachable_from_host", false, L4Kind::tcp, false, 3, 3, 0, 0},
                      ErrCase{"ipv4_echo_time_exceeded_from_router", false, L4Kind::echo, true, 11, 0, 0, 0},
                      ErrCase{"ipv6_udp_time_exceeded_from_router", true, L4Kind::udp, true, 3, 0, 0, 0},
                      ErrCase{"ipv6_udp_port_unreachable_from_host", true, L4Kind::udp, false, 1, 4, 0, 0},
                      ErrCase{"ipv6_udp_packet_too_big_from_router", true, L4Kind::udp, true, 2, 0, 1280, 0},
                      ErrCase{"ipv6_tcp_time_exceeded_from_router", true, L4Kind::tcp, true, 3, 0, 0, 0},
                      ErrCase{"ipv6_echo_time_exceeded_from_router", true, L4Kind::echo, true, 3, 0, 0, 0}),
    [](const ::testing::TestParamInfo<ErrCase>& info) { return std::string(info.param.name); });

// The other way: the LAN host refuses the (translated back) answer of its own
// source-NAT flow; outside, the error must come from the translated address
// and quote the answer as the WAN host sent it.
class NatIcmpErrorOutboundTest : public NatTest {
protected:
    void outbound_case(bool v6) {
        const std::string lan = lan_host(v6), wan = wan_host(v6), nat = wan_addr(v6);
        ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
        auto r = run(request(from_lan(v6, lan, wan), L4Kind::udp, v6, kClientPort, 53), lan_if());
        ASSERT_EQ(r.retval, XDP_REDIRECT);
        const uint16_t port = frame_sport(r.output);
        auto ar = expect_nat("answer", response(from_wan(v6, wan, nat), L4Kind::udp, v6, 53, port), wan_if(),
                             XDP_REDIRECT, response(to_lan(v6, wan, lan), L4Kind::udp, v6, 53, kClientPort));
        Bytes received = strip_eth(ar.output);                                                 // W:53 → L:client
        Bytes as_sent = strip_eth(response(to_lan(v6, wan, nat), L4Kind::udp, v6, 53, port));  // W:53 → N:port
        auto error = [&](PacketBuilder b, const Bytes& quoted) {
            return (v6 ? b.icmpv6_error(1, 4, quoted) : b.icmp_error(3, 3, quoted)).build();
        };
        snapshot_stats();
        auto er = expect_nat("port unreachable from the LAN host", error(from_lan(v6, lan, wan), received), lan_if(),
                             XDP_REDIRECT, error(to_wan(v6, nat, wan), as_sent));
        EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 1);
        check_quoted(er.output, v6, wan, 53, nat, port, true);
    }
};

TEST_F(NatIcmpErrorOutboundTest, Ipv4ErrorFromLanHostAboutTheAnswer) {
    outbound_case(false);
}
TEST_F(NatIcmpErrorOutboundTest, Ipv6ErrorFromLanHostAboutTheAnswer) {
    outbound_case(true);
}

// Destination NAT: public UDP port 5353 on wan0's address → the LAN host's 53
// (kPortForwardsYaml).
class NatIcmpErrorDnatTest : public NatTest {
protected:
    void dnat_case(bool v6);
};

void NatIcmpErrorDnatTest::dnat_case(bool v6) {
    const std::string pub = wan_addr(v6), lan = lan_host(v6), wan = wan_host(v6), router = wan_router(v6);
    ASSERT_TRUE(apply_nat(kPortForwardsYaml));
    auto query = [](PacketBuilder b, uint16_t dport) { return b.udp(41000, dport).payload_pattern(24).build(); };
    auto answer = [](PacketBuilder b, uint16_t sport) { return b.udp(sport, 41000).payload_pattern(70).build(); };
    auto r = expect_nat("query to the public port", query(from_wan(v6, wan, pub), 5353), wan_if(), XDP_REDIRECT,
                        query(to_lan(v6, wan, lan), 53));
    auto error = [&](PacketBuilder b, uint8_t t4, uint8_t c4, uint8_t t6, uint8_t c6, const Bytes& quoted) {
        return (v6 ? b.icmpv6_error(t6, c6, quoted) : b.icmp_error(t4, c4, quoted)).build();
    };

    // 1. The inside server has nothing on 53: port unreachable about the
    //    translated query, going out. Outside it must be about the public port,
    //    from the public address.
    {
        Bytes received = strip_eth(r.output);                          // W:41000 → L:53, as the server got it
        Bytes as_sent = strip_eth(query(to_lan(v6, wan, pub), 5353));  // W:41000 → P:5353
        snapshot_stats();
        auto er =
            expect_nat("port unreachable from the inside server", error(from_lan(v6, lan, wan), 3, 3, 1, 4, received),
                       lan_if(), XDP_REDIRECT, error(to_wan(v6, pub, wan), 3, 3, 1, 4, as_sent));
        EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 1);
        check_quoted(er.output, v6, wan, 41000, pub, 5353, true);
    }

    // 2. The server's answer (P:5353 → W:41000 outside) dies at a WAN router:
    //    the error reaches the server, quoting its own answer.
    {
        auto ar = expect_nat("answer", answer(from_lan(v6, lan, wan), 53), lan_if(), XDP_REDIRECT,
                             answer(to_wan(v6, pub, wan), 5353));
        Bytes received = strip_eth(ar.output);                         // P:5353 → W:41000
        Bytes original = strip_eth(answer(to_wan(v6, lan, wan), 53));  // L:53 → W:41000
        snapshot_stats();
        auto er = expect_nat("time exceeded from a WAN router about the answer",
                             error(from_wan(v6, router, pub), 11, 0, 3, 0, received), wan_if(), XDP_REDIRECT,
                             error(to_lan(v6, router, lan), 11, 0, 3, 0, original));
        EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 1);
        check_quoted(er.output, v6, lan, 53, wan, 41000, true);
    }
}

TEST_F(NatIcmpErrorDnatTest, Ipv4ErrorsAboutPortForward) {
    dnat_case(false);
}
TEST_F(NatIcmpErrorDnatTest, Ipv6ErrorsAboutPortForward) {
    dnat_case(true);
}

// An error to the translated address quoting a port no flow holds is not
// rewritten: it is for the firewall itself, and quotes no flow the firewall
// opened, so host-inbound drops it.
TEST_F(NatIcmpErrorDnatTest, ErrorAboutUnusedTranslatedPortIsLeftAlone) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    Bytes quoted = PacketBuilder().ipv4(wan_addr(false), wan_host(false)).ttl(1).udp(20000, 53).build_ip();
    Bytes in = from_wan(false, wan_router(false), wan_addr(false)).icmp_error(11, 0, quoted).build();
    expect_nat("time exceeded quoting an unused port", in, wan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HOST_INBOUND));
    EXPECT_EQ(stat_change(STAT_NAT_ICMP_ERROR), 0);
}

}  // namespace
}  // namespace sluice::test
