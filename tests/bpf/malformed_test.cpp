// Malformed and truncated frames: each is dropped, and exactly its own drop
// counter moves (info counters such as rx aside).
#include "datapath_env.h"

namespace sluice::test {
namespace {

struct MalformedCase {
    const char* name;
    // Gets a builder holding Ethernet (LAN host -> lan0) and adds the rest.
    Bytes (*frame)(PacketBuilder eth, const Ipv4Addr& src4, const Ipv4Addr& dst4, const Ipv6Addr& src6,
                   const Ipv6Addr& dst6);
    int counter;
};
// Names the case in test listings (ctest names) instead of its bytes.
void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }


class MalformedTest : public DatapathTest, public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(MalformedTest, IsDroppedAndCounted) {
    const auto& c = GetParam();
    Bytes frame = c.frame(std::move(PacketBuilder().eth(kLanHostMac, lan_mac())), kLanHost4, kWanHost4, kLanHost6,
                          kWanHost6);
    ASSERT_GE(frame.size(), XdpRunner::kMinTestFrame) << c.name << ": see ShorterThanEthernetNeverReachesTheProgram";
    // An skb for a SCHED_CLS program is refused when its IP header is cut
    // short (the kernel reads it to fill the socket's family first).
    const size_t ip_header = frame.size() > 13 && frame[12] == 0x86 && frame[13] == 0xdd ? 40 : 20;
    if (hook() == Hook::tc && (c.name == std::string("ipv4_truncated") || c.name == std::string("ipv6_truncated")) &&
        frame.size() < 14 + ip_header)
        GTEST_SKIP() << "BPF_PROG_TEST_RUN builds no skb from a frame shorter than its IP header (" << frame.size()
                     << " bytes): the XDP run of this case covers the parser";
    expect_fixture({c.name, frame, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(c.counter));
}

// A frame shorter than an Ethernet header cannot be offered to the program
// through BPF_PROG_TEST_RUN: the kernel refuses it, so no counter moves and
// nothing is forwarded. (drop-eth-truncated stays for drivers that hand XDP
// such runts; its bounds check is the verifier's to prove.)
class ShortFrameTest : public DatapathTest {};
TEST_F(ShortFrameTest, ShorterThanEthernetNeverReachesTheProgram) {
    Bytes frame = PacketBuilder().eth(kLanHostMac, lan_mac()).payload_pattern(8).truncate(10).build();
    ASSERT_LT(frame.size(), XdpRunner::kMinTestFrame);
    snapshot_stats();
    const XdpRunner runner = this->runner();
    auto r = runner.run(frame, lan_if());
    EXPECT_FALSE(r.ok()) << "the kernel ran the program on a " << frame.size() << "-byte frame";
    for (const auto& [reason, change] : stats_delta()) EXPECT_EQ(change, 0) << "counter " << reason << " moved";
}

#define FRAME [](PacketBuilder b, const Ipv4Addr& s4, const Ipv4Addr& d4, const Ipv6Addr& s6, const Ipv6Addr& d6) \
    -> Bytes
#define UNUSED_ADDRS (void)s4, (void)d4, (void)s6, (void)d6

INSTANTIATE_TEST_SUITE_P(
    Frames, MalformedTest,
    ::testing::Values(
        MalformedCase{"vlan_truncated", FRAME { UNUSED_ADDRS; return b.ethertype(0x8100).payload(Bytes{0x00, 0x64}).build(); },
                      STAT_DROP_VLAN_TRUNCATED},
        MalformedCase{"ipv4_truncated", FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).tcp(1, 80).syn().truncate(14 + 12).build(); },
                      STAT_DROP_IPV4_TRUNCATED},
        MalformedCase{"ipv4_options_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).ip_options({1, 1, 1, 1, 1, 1, 1, 1}).tcp(1, 80).syn()
                                  .truncate(14 + 24).build(); },
                      STAT_DROP_IPV4_TRUNCATED},
        MalformedCase{"ipv4_ihl_4", FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).ihl(4).tcp(1, 80).syn().build(); },
                      STAT_DROP_IPV4_BAD_HEADER},
        MalformedCase{"ipv4_version_5", FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).ip_version(5).tcp(1, 80).syn().build(); },
                      STAT_DROP_IPV4_BAD_HEADER},
        MalformedCase{"ipv4_total_length_beyond_frame",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).total_length(1000).tcp(1, 80).syn().build(); },
                      STAT_DROP_IPV4_BAD_LENGTH},
        MalformedCase{"ipv4_total_length_below_header",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).total_length(16).tcp(1, 80).syn().build(); },
                      STAT_DROP_IPV4_BAD_LENGTH},
        MalformedCase{"ipv6_truncated", FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).tcp(1, 80).syn().truncate(14 + 30).build(); },
                      STAT_DROP_IPV6_TRUNCATED},
        MalformedCase{"ipv6_payload_length_beyond_frame",
                      FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).payload_length(500).tcp(1, 80).syn().build(); },
                      STAT_DROP_IPV6_BAD_LENGTH},
        MalformedCase{"tcp4_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).protocol(proto::kTcp).payload_pattern(10).build(); },
                      STAT_DROP_TCP_TRUNCATED},
        MalformedCase{"tcp6_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).protocol(proto::kTcp).payload_pattern(10).build(); },
                      STAT_DROP_TCP_TRUNCATED},
        MalformedCase{"tcp_options_beyond_segment",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).tcp(1, 80).syn().data_offset(15).build(); },
                      STAT_DROP_TCP_TRUNCATED},
        MalformedCase{"tcp_data_offset_4", FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).tcp(1, 80).syn().data_offset(4).build(); },
                      STAT_DROP_TCP_BAD_HEADER},
        MalformedCase{"tcp_syn_fin",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).tcp(1, 80).flags(tcp_flag::kSyn | tcp_flag::kFin).build(); },
                      STAT_DROP_TCP_BAD_FLAGS},
        MalformedCase{"tcp6_syn_rst",
                      FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).tcp(1, 80).flags(tcp_flag::kSyn | tcp_flag::kRst).build(); },
                      STAT_DROP_TCP_BAD_FLAGS},
        MalformedCase{"tcp_no_flags", FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).tcp(1, 80).flags(0).build(); },
                      STAT_DROP_TCP_BAD_FLAGS},
        // FIN, PSH or URG without ACK (a "Xmas" scan's FIN|PSH|URG, a bare FIN): no stack sends them.
        MalformedCase{"tcp_fin_without_ack",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).tcp(1, 80).flags(tcp_flag::kFin).build(); },
                      STAT_DROP_TCP_BAD_FLAGS},
        MalformedCase{"tcp6_xmas",
                      FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).tcp(1, 80)
                          .flags(tcp_flag::kFin | tcp_flag::kPsh | tcp_flag::kUrg).build(); },
                      STAT_DROP_TCP_BAD_FLAGS},
        MalformedCase{"tcp_psh_without_ack",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).tcp(1, 80).flags(tcp_flag::kPsh).build(); },
                      STAT_DROP_TCP_BAD_FLAGS},
        MalformedCase{"udp4_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).protocol(proto::kUdp).payload_pattern(4).build(); },
                      STAT_DROP_UDP_TRUNCATED},
        MalformedCase{"udp6_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).protocol(proto::kUdp).payload_pattern(4).build(); },
                      STAT_DROP_UDP_TRUNCATED},
        MalformedCase{"udp_length_beyond_datagram",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).udp(5353, 53).udp_length(100).payload_pattern(4).build(); },
                      STAT_DROP_UDP_BAD_LENGTH},
        MalformedCase{"udp_length_below_header",
                      FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).udp(5353, 53).udp_length(4).payload_pattern(4).build(); },
                      STAT_DROP_UDP_BAD_LENGTH},
        MalformedCase{"icmp_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).protocol(proto::kIcmp).payload(Bytes{8, 0, 0, 0}).build(); },
                      STAT_DROP_ICMP_TRUNCATED},
        MalformedCase{"icmp_error_quote_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv4(s4, d4).icmp_error(3, 1, Bytes{0x45, 0, 0, 40, 0, 0}).build(); },
                      STAT_DROP_ICMP_TRUNCATED},
        MalformedCase{"icmpv6_truncated",
                      FRAME { UNUSED_ADDRS; return b.ipv6(s6, d6).protocol(proto::kIcmpv6).payload(Bytes{128, 0, 0, 0}).build(); },
                      STAT_DROP_ICMPV6_TRUNCATED}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return std::string(info.param.name); });

#undef FRAME
#undef UNUSED_ADDRS

}  // namespace
}  // namespace sluice::test
