// Per-address screens (bpf/screen.bpf.h): a source's session limit and rate
// of new sessions, a destination's rate, checked when a session is about to
// be created. Each case opens flows from the LAN zone and checks the verdict,
// the drop counter, the zone's screen counter and the sessions; the session
// limit also across the controller's GC (which releases what it expires) and
// the datapath's own retirement of a closed flow (a SYN reusing its tuple).
#include <bpf/bpf.h>

#include <cstring>

#include "daemon/session_gc.h"
#include "screen_env.h"

namespace sluice::test {
namespace {

std::string config_with(const std::string& screen) { return screen_config(screen, "timeouts: { udp: 1s }\n"); }

class ScreenLimitsTest : public ScreenTest {
protected:
    std::string config_yaml() const override {
        return config_with("{ source-limit: { sessions: 3 } }");
    }
    Bytes udp_from(const char* src, uint16_t sport, const char* dst = NetnsFixture::kWanHost4) const {
        return PacketBuilder()
            .eth(kLanHostMac, lan_mac())
            .ipv4(Ipv4Addr::parse(src), Ipv4Addr::parse(dst))
            .udp(sport, 53)
            .payload_pattern(16)
            .build();
    }
    void expect_opens(const std::string& what, const Bytes& frame) {
        snapshot_stats();
        EXPECT_EQ(run(frame, lan_if()).retval, XDP_REDIRECT) << what;
        EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1) << what;
    }
    void expect_refused(const std::string& what, const Bytes& frame, int reason) {
        snapshot_stats();
        expect_fixture({what, frame, lan_if(), XDP_DROP, std::nullopt});
        EXPECT_TRUE(only_drop_or_pass_counter(reason)) << what;
    }
    size_t sessions4() { return count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)); }
};

TEST_F(ScreenLimitsTest, SourceSessionLimitHoldsOneSourceOnly) {
    for (uint16_t p = 1; p <= 3; ++p) expect_opens("flow " + std::to_string(p), udp_from("198.18.1.10", 5000 + p));
    expect_refused("a 4th flow from the same source", udp_from("198.18.1.10", 5004), STAT_DROP_SCREEN_SOURCE_SESSIONS);
    EXPECT_EQ(screen(1).source_session_drops, 1u);
    // Established flows go on; other sources are not affected.
    snapshot_stats();
    EXPECT_EQ(run(udp_from("198.18.1.10", 5001), lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(stat_change(STAT_SESSION_HIT), 1);
    expect_opens("another source", udp_from("198.18.1.11", 5001));
    EXPECT_EQ(sessions4(), 8u);
}

// The GC expires the flows (udp: 1 s; here "now" is a minute later) and
// releases them: the source may open sessions again.
TEST_F(ScreenLimitsTest, FlowsTheGcExpiresAreReleased) {
    for (uint16_t p = 1; p <= 3; ++p) expect_opens("flow " + std::to_string(p), udp_from("198.18.1.10", 5000 + p));
    expect_refused("over the limit", udp_from("198.18.1.10", 5004), STAT_DROP_SCREEN_SOURCE_SESSIONS);
    SessionGc gc(env_->map_fd(SLUICE_MAP_SESSIONS_V4), env_->map_fd(SLUICE_MAP_SESSIONS_V6),
                 env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG), env_->map_fd(SLUICE_MAP_STATS), -1,
                 env_->map_fd(SLUICE_MAP_SRC_RELEASED));
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    const uint64_t later = (uint64_t(ts.tv_sec) + 60) * 1000000000ull;
    auto removed = gc.collect(later);
    ASSERT_TRUE(removed.ok()) << removed.error().message;
    EXPECT_EQ(removed.value(), 3u);
    for (uint16_t p = 5; p <= 7; ++p)
        expect_opens("after the GC, flow " + std::to_string(p), udp_from("198.18.1.10", 5000 + p));
    expect_refused("over the limit again", udp_from("198.18.1.10", 5008), STAT_DROP_SCREEN_SOURCE_SESSIONS);
}

// A SYN reusing a closed flow's tuple retires the old flow in the datapath:
// the new flow takes its place in the count, not a second one.
TEST_F(ScreenLimitsTest, RetiredFlowIsReleased) {
    auto syn = [&](uint16_t sport) {
        return lan_to_wan4().tcp(sport, 80).seq(1).syn().build();
    };
    expect_opens("tcp flow", syn(40000));
    expect_opens("udp flow 1", udp_from("198.18.1.10", 5001));
    expect_opens("udp flow 2", udp_from("198.18.1.10", 5002));
    // Close the TCP flow with a RST, then reuse its tuple.
    EXPECT_EQ(run(lan_to_wan4().tcp(40000, 80).seq(2).rst().build(), lan_if()).retval, XDP_REDIRECT);
    expect_opens("a new SYN on the closed tuple", syn(40000));
    expect_refused("the limit still holds", udp_from("198.18.1.10", 5003), STAT_DROP_SCREEN_SOURCE_SESSIONS);
}

TEST_F(ScreenLimitsTest, SourceRate) {
    ASSERT_TRUE(env_->apply(config_with("{ source-limit: { new-sessions: 5 } }")).ok());
    for (uint16_t p = 1; p <= 5; ++p) expect_opens("flow " + std::to_string(p), udp_from("198.18.1.10", 6000 + p));
    expect_refused("a 6th new flow in the same second", udp_from("198.18.1.10", 6006), STAT_DROP_SCREEN_SOURCE_RATE);
    EXPECT_EQ(screen(1).source_rate_drops, 1u);
    expect_opens("another source", udp_from("198.18.1.12", 6006));
}

TEST_F(ScreenLimitsTest, DestinationRate) {
    ASSERT_TRUE(env_->apply(config_with("{ destination-limit: { new-sessions: 2 } }")).ok());
    expect_opens("source 1", udp_from("198.18.1.10", 7001));
    expect_opens("source 2", udp_from("198.18.1.11", 7001));
    expect_refused("a 3rd source, same destination", udp_from("198.18.1.12", 7001), STAT_DROP_SCREEN_DEST_RATE);
    EXPECT_EQ(screen(1).destination_rate_drops, 1u);
    // (No neighbour entry for .201: the first packet goes to the kernel, the
    // session is created all the same.)
    snapshot_stats();
    run(udp_from("198.18.1.12", 7001, "198.18.100.201"), lan_if());
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1) << "another destination";
}

}  // namespace
}  // namespace sluice::test
