// Scan screens (bpf/screen.bpf.h screen_scan): one source sending packets
// that find no session to many ports or many hosts within a window. With
// action block its packets that open no session are dropped for the hold
// time, its established sessions go on and other sources are untouched;
// with action count the scan is only counted. Distinct ports and hosts are
// estimated from 256-bit sets, so the cases assert a range around the
// threshold, never an exact packet.
#include "screen_env.h"

namespace sluice::test {
namespace {

class ScreenScanTest : public ScreenTest {
protected:
    std::string config_yaml() const override {
        return screen_config("{ scan: { ports: 10, window: 60s, action: block, hold-time: 60s } }");
    }
    Bytes syn(uint16_t sport, uint16_t dport) const {
        return lan_to_wan4().tcp(sport, dport).seq(1).syn().build();
    }
    // Sends frames; returns how many opened a session before the first
    // drop-screen-scan (every later one must be a scan drop too).
    int opened_before_block(const std::vector<Bytes>& frames) {
        int opened = 0;
        bool blocked = false;
        for (size_t i = 0; i < frames.size(); ++i) {
            snapshot_stats();
            run(frames[i], lan_if());
            if (stat_change(STAT_DROP_SCREEN_SCAN) == 1) {
                blocked = true;
                continue;
            }
            EXPECT_FALSE(blocked) << "packet " << i << " passed after the source was blocked";
            EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1) << "packet " << i;
            ++opened;
        }
        return opened;
    }
};

TEST_F(ScreenScanTest, PortScanIsBlockedForTheHoldTime) {
    // The scanner's first flow: a DNS query (one port of the scan).
    std::vector<Bytes> frames{lan_to_wan4().udp(5000, 53).payload_pattern(8).build()};
    for (uint16_t p = 0; p < 39; ++p) frames.push_back(syn(40000, 1000 + p));
    const int opened = opened_before_block(frames);
    // 10 distinct ports set about 10 bits; a collision or two delays it.
    EXPECT_GE(opened, 9);
    EXPECT_LE(opened, 14);
    const screen_counter c = screen(1);
    EXPECT_EQ(c.scans_detected, 1u);
    EXPECT_EQ(c.scan_drops, uint64_t(40 - opened));
    // Its sessions go on; a new flow to a port it already tried does not.
    snapshot_stats();
    EXPECT_EQ(run(lan_to_wan4().udp(5000, 53).payload_pattern(8).build(), lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(stat_change(STAT_SESSION_HIT), 1) << "an established session of the scanner";
    snapshot_stats();
    expect_fixture({"a new flow from the blocked source", syn(40001, 1000), lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_SCREEN_SCAN));
    // Another source is not blocked.
    snapshot_stats();
    run(PacketBuilder().eth(kLanHostMac, lan_mac()).ipv4("198.18.1.77", NetnsFixture::kWanHost4)
            .tcp(40000, 1000).seq(1).syn().build(),
        lan_if());
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1) << "another source";
}

// Many connections to one port of one host are no scan.
TEST_F(ScreenScanTest, ManyFlowsToOneServiceAreNoScan) {
    std::vector<Bytes> frames;
    for (uint16_t p = 0; p < 40; ++p) frames.push_back(syn(41000 + p, 443));
    EXPECT_EQ(opened_before_block(frames), 40);
    EXPECT_EQ(screen(1).scans_detected, 0u);
}

TEST_F(ScreenScanTest, CountOnlyCountsOnce) {
    ASSERT_TRUE(env_->apply(screen_config("{ scan: { ports: 10, window: 60s, action: count } }")).ok());
    std::vector<Bytes> frames;
    for (uint16_t p = 0; p < 40; ++p) frames.push_back(syn(40000, 2000 + p));
    snapshot_stats();
    EXPECT_EQ(opened_before_block(frames), 40);
    const screen_counter c = screen(1);
    EXPECT_EQ(c.scans_detected, 1u);
    EXPECT_EQ(c.scan_drops, 0u);
}

// IPv6 host sweep: UDP to one port on many hosts; packets for hosts without
// a neighbour entry still open their session (the kernel resolves them).
TEST_F(ScreenScanTest, HostSweepIpv6) {
    ASSERT_TRUE(env_->apply(screen_config("{ scan: { hosts: 12, window: 60s } }")).ok());
    std::vector<Bytes> frames;
    for (int h = 1; h <= 40; ++h) {
        char dst[64];
        std::snprintf(dst, sizeof(dst), "2001:2:0:100::%x", 0x1000 + h);
        frames.push_back(PacketBuilder().eth(kLanHostMac, lan_mac()).ipv6(kLanHost6, Ipv6Addr::parse(dst))
                             .udp(5000, 53).payload_pattern(8).build());
    }
    const int opened = opened_before_block(frames);
    EXPECT_GE(opened, 11);
    EXPECT_LE(opened, 17);
    EXPECT_EQ(screen(1).scans_detected, 1u);
}

}  // namespace
}  // namespace sluice::test
