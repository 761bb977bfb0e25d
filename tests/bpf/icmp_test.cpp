// ICMP / ICMPv6: echo sessions keyed by identifier, and errors that are
// related to a session (forwarded) or not (dropped).
#include "datapath_env.h"

namespace sluice::test {
namespace {

class IcmpTest : public DatapathTest {};

TEST_F(IcmpTest, Icmp4EchoRequestAndReply) {
    auto req = [](PacketBuilder b) { return b.icmp_echo_request(0x1234, 1).payload_pattern(56).build(); };
    auto rep = [](PacketBuilder b) { return b.icmp_echo_reply(0x1234, 1).payload_pattern(56).build(); };
    expect_fixture({"IPv4 echo request lan->wan", req(lan_to_wan4()), lan_if(), XDP_REDIRECT, req(lan_to_wan4_out())});
    EXPECT_TRUE(session4(kLanHost4, kWanHost4, 0x1234, 0, proto::kIcmp)) << "request entry (src_port = id)";
    EXPECT_TRUE(session4(kWanHost4, kLanHost4, 0, 0x1234, proto::kIcmp)) << "reply entry (dst_port = id)";
    expect_fixture({"IPv4 echo reply wan->lan", rep(wan_to_lan4()), wan_if(), XDP_REDIRECT, rep(wan_to_lan4_out())});
}

TEST_F(IcmpTest, Icmp4EchoReplyWithOtherIdIsDropped) {
    run(lan_to_wan4().icmp_echo_request(0x1234, 1).build(), lan_if());
    snapshot_stats();
    Bytes other = wan_to_lan4().icmp_echo_reply(0x4321, 1).build();
    expect_fixture({"IPv4 echo reply with an unknown id", other, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
}

TEST_F(IcmpTest, Icmp6EchoRequestAndReply) {
    auto req = [](PacketBuilder b) { return b.icmpv6_echo_request(0x1234, 1).payload_pattern(56).build(); };
    auto rep = [](PacketBuilder b) { return b.icmpv6_echo_reply(0x1234, 1).payload_pattern(56).build(); };
    expect_fixture({"IPv6 echo request lan->wan", req(lan_to_wan6()), lan_if(), XDP_REDIRECT, req(lan_to_wan6_out())});
    EXPECT_TRUE(session6(kLanHost6, kWanHost6, 0x1234, 0, proto::kIcmpv6));
    EXPECT_TRUE(session6(kWanHost6, kLanHost6, 0, 0x1234, proto::kIcmpv6));
    expect_fixture({"IPv6 echo reply wan->lan", rep(wan_to_lan6()), wan_if(), XDP_REDIRECT, rep(wan_to_lan6_out())});
}

TEST_F(IcmpTest, Icmp6EchoReplyWithOtherIdIsDropped) {
    run(lan_to_wan6().icmpv6_echo_request(0x1234, 1).build(), lan_if());
    snapshot_stats();
    Bytes other = wan_to_lan6().icmpv6_echo_reply(0x4321, 1).build();
    expect_fixture({"IPv6 echo reply with an unknown id", other, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
}

// An error from a router on the WAN side about a packet the LAN host sent.
struct IcmpErrorCase {
    const char* name;
    bool v6;
    uint8_t type, code;
    uint32_t rest;  // next-hop MTU for "fragmentation needed" / "packet too big"
};
// Names the case in test listings (ctest names) instead of its bytes.
void PrintTo(const IcmpErrorCase& c, std::ostream* os) { *os << c.name; }


class IcmpErrorTest : public DatapathTest, public ::testing::WithParamInterface<IcmpErrorCase> {
protected:
    // The original lan->wan datagram (a permitted DNS query) as it left the firewall.
    Bytes original(bool v6, uint16_t dport) const {
        auto b = v6 ? lan_to_wan6_out() : lan_to_wan4_out();
        return b.udp(5353, dport).payload_pattern(40).build_ip();
    }
    Bytes error_frame(bool in, const IcmpErrorCase& c, const Bytes& quoted) const {
        PacketBuilder b;
        if (c.v6) {
            b = in ? PacketBuilder().eth(kWanHostMac, wan_mac()).ipv6(kWanRouter6, kLanHost6).hop_limit(64)
                   : PacketBuilder().eth(lan_mac(), kLanHostMac).ipv6(kWanRouter6, kLanHost6).hop_limit(63);
            b.icmpv6_error(c.type, c.code, quoted, c.rest);
        } else {
            b = in ? PacketBuilder().eth(kWanHostMac, wan_mac()).ipv4(kWanRouter4, kLanHost4).ttl(64)
                   : PacketBuilder().eth(lan_mac(), kLanHostMac).ipv4(kWanRouter4, kLanHost4).ttl(63);
            b.icmp_error(c.type, c.code, quoted, c.rest);
        }
        return b.build();
    }
};

TEST_P(IcmpErrorTest, RelatedToSessionIsForwarded) {
    const auto& c = GetParam();
    Bytes query = (c.v6 ? lan_to_wan6() : lan_to_wan4()).udp(5353, 53).payload_pattern(40).build();
    ASSERT_EQ(run(query, lan_if()).retval, XDP_REDIRECT) << "the DNS query should open a session";
    snapshot_stats();
    // IPv4 routers quote the IP header + 8 bytes; IPv6 ones as much as fits.
    Bytes quoted = c.v6 ? original(true, 53) : quote(original(false, 53), 28);
    auto r = expect_fixture({std::string(c.name) + " about a session", error_frame(true, c, quoted), wan_if(),
                             XDP_REDIRECT, error_frame(false, c, quoted)});
    EXPECT_EQ(stat_change(STAT_ICMP_RELATED), 1);
    auto report = verify_checksums(r.output);
    EXPECT_TRUE(report.ok()) << report.describe();
}

TEST_P(IcmpErrorTest, UnrelatedIsDropped) {
    const auto& c = GetParam();
    Bytes quoted = c.v6 ? original(true, 53) : quote(original(false, 53), 28);
    expect_fixture({std::string(c.name) + " about no known flow", error_frame(true, c, quoted), wan_if(), XDP_DROP,
                    std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_ICMP_UNRELATED));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, IcmpErrorTest,
    ::testing::Values(IcmpErrorCase{"icmp4_frag_needed", false, 3, 4, 1400},
                      IcmpErrorCase{"icmp4_port_unreachable", false, 3, 3, 0},
                      IcmpErrorCase{"icmp4_time_exceeded", false, 11, 0, 0},
                      IcmpErrorCase{"icmp6_dest_unreachable", true, 1, 4, 0},
                      IcmpErrorCase{"icmp6_packet_too_big", true, 2, 0, 1280},
                      IcmpErrorCase{"icmp6_time_exceeded", true, 3, 0, 0}),
    [](const ::testing::TestParamInfo<IcmpErrorCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace sluice::test
