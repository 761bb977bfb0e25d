// Packet-flood screens (bpf/screen.bpf.h screen_packet_rate): ICMP and UDP
// packets per second from one source and to one destination, counted on
// every packet of those protocols from the zone, those of an established
// session too. Each case checks the verdict, the drop counter and the
// zone's screen counter, and that other sources, destinations and TCP are
// not touched.
#include "screen_env.h"

namespace sluice::test {
namespace {

class ScreenFloodTest : public ScreenTest {
protected:
    std::string config_yaml() const override {
        return screen_config("{ source-limit: { udp-packets: 4, icmp-packets: 3 } }");
    }
    Bytes udp_from(const char* src, const char* dst = NetnsFixture::kWanHost4) const {
        return PacketBuilder()
            .eth(kLanHostMac, lan_mac())
            .ipv4(Ipv4Addr::parse(src), Ipv4Addr::parse(dst))
            .udp(5000, 53)
            .payload_pattern(16)
            .build();
    }
    Bytes ping_from(const char* src, uint16_t seq) const {
        return PacketBuilder()
            .eth(kLanHostMac, lan_mac())
            .ipv4(Ipv4Addr::parse(src), kWanHost4)
            .icmp_echo_request(7, seq)
            .build();
    }
    void expect_forwarded(const std::string& what, const Bytes& frame) {
        snapshot_stats();
        EXPECT_EQ(run(frame, lan_if()).retval, XDP_REDIRECT) << what;
        EXPECT_EQ(stat_change(STAT_FORWARD), 1) << what;
    }
    void expect_flood_drop(const std::string& what, const Bytes& frame, int reason) {
        snapshot_stats();
        expect_fixture({what, frame, lan_if(), XDP_DROP, std::nullopt});
        EXPECT_TRUE(only_drop_or_pass_counter(reason)) << what;
    }
};

// One UDP flow: its first packet opens the session, the next three hit it;
// the fifth packet in the second is over the source's rate although its
// session exists.
TEST_F(ScreenFloodTest, SourceUdpRateHoldsEstablishedFlowsToo) {
    for (int i = 1; i <= 4; ++i) expect_forwarded("udp packet " + std::to_string(i), udp_from("198.18.1.10"));
    expect_flood_drop("5th udp packet in the second", udp_from("198.18.1.10"), STAT_DROP_SCREEN_UDP_FLOOD);
    expect_flood_drop("6th udp packet in the second", udp_from("198.18.1.10"), STAT_DROP_SCREEN_UDP_FLOOD);
    EXPECT_EQ(screen(1).source_udp_drops, 2u);
    EXPECT_EQ(screen(1).source_icmp_drops, 0u);
    // Another source, ICMP from the same source and TCP are not held.
    snapshot_stats();
    run(udp_from("198.18.1.11"), lan_if());
    EXPECT_EQ(stat_change(STAT_DROP_SCREEN_UDP_FLOOD), 0) << "another source";
    expect_forwarded("icmp from the flooding source", ping_from("198.18.1.10", 1));
    snapshot_stats();
    EXPECT_EQ(run(lan_to_wan4().tcp(40000, 80).seq(1).syn().build(), lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1) << "tcp from the flooding source";
}

TEST_F(ScreenFloodTest, SourceIcmpRate) {
    for (uint16_t i = 1; i <= 3; ++i) expect_forwarded("echo " + std::to_string(i), ping_from("198.18.1.10", i));
    expect_flood_drop("4th echo in the second", ping_from("198.18.1.10", 4), STAT_DROP_SCREEN_ICMP_FLOOD);
    EXPECT_EQ(screen(1).source_icmp_drops, 1u);
    EXPECT_EQ(screen(1).source_udp_drops, 0u);
}

// Many sources, one destination: the destination's rate holds the sum.
TEST_F(ScreenFloodTest, DestinationUdpRate) {
    ASSERT_TRUE(env_->apply(screen_config("{ destination-limit: { udp-packets: 3 } }")).ok());
    const char* sources[] = {"198.18.1.10", "198.18.1.11", "198.18.1.12"};
    for (const char* src : sources) expect_forwarded(std::string("udp from ") + src, udp_from(src));
    expect_flood_drop("a 4th source to the same destination", udp_from("198.18.1.13"), STAT_DROP_SCREEN_UDP_FLOOD);
    EXPECT_EQ(screen(1).destination_udp_drops, 1u);
    snapshot_stats();
    run(udp_from("198.18.1.13", "198.18.100.201"), lan_if());
    EXPECT_EQ(stat_change(STAT_DROP_SCREEN_UDP_FLOOD), 0) << "another destination";
}

TEST_F(ScreenFloodTest, DestinationIcmpRateIpv6) {
    ASSERT_TRUE(env_->apply(screen_config("{ destination-limit: { icmp-packets: 2 } }")).ok());
    for (uint16_t i = 1; i <= 2; ++i)
        expect_forwarded("echo " + std::to_string(i), lan_to_wan6().icmpv6_echo_request(9, i).build());
    expect_flood_drop("3rd echo to the destination", lan_to_wan6().icmpv6_echo_request(9, 3).build(),
                      STAT_DROP_SCREEN_ICMP_FLOOD);
    EXPECT_EQ(screen(1).destination_icmp_drops, 1u);
}

// Neighbour discovery is never limited: the interface needs it.
TEST_F(ScreenFloodTest, NeighbourDiscoveryIsNotLimited) {
    ASSERT_TRUE(env_->apply(screen_config("{ source-limit: { icmp-packets: 1 } }")).ok());
    Bytes ns = PacketBuilder()
                   .eth(kLanHostMac, lan_mac())
                   .ipv6(kLanHost6, kLanFw6)
                   .hop_limit(255)
                   .icmpv6(135, 0)
                   .payload_pattern(16)
                   .build();
    for (int i = 0; i < 3; ++i) {
        snapshot_stats();
        EXPECT_EQ(run(ns, lan_if()).retval, XDP_PASS);
        EXPECT_EQ(stat_change(STAT_DROP_SCREEN_ICMP_FLOOD), 0);
    }
}

}  // namespace
}  // namespace sluice::test
