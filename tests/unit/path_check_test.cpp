// perf-test's proof that a number went through what it is labelled with
// (perftest/path_check.h): reading `ip -j link show` and `sluice show stats
// --json`, and the verdicts on a sluice run and a baseline run.
#include <gtest/gtest.h>

#include "perftest/path_check.h"

namespace sluice::perftest {
namespace {

using cluster::interfaces_with_xdp;
using cluster::tc_filter_prog_id;
using cluster::tc_filter_runs;
using cluster::xdp_prog_id;

// Shapes of `ip -j link show` (iproute2 6.1): one program, several
// (multi-attach), none.
constexpr const char* kLinks = R"([
  {"ifindex":1,"ifname":"lo","flags":["LOOPBACK"],"mtu":65536},
  {"ifindex":2,"ifname":"lan0","mtu":1500,
   "xdp":{"mode":2,"prog":{"id":41,"name":"xdp_main_prog","tag":"c2b6","jited":1},
          "attached":[{"mode":2,"prog":{"id":41,"name":"xdp_main_prog","tag":"c2b6","jited":1}}]}},
  {"ifindex":3,"ifname":"wan0","mtu":1500,
   "xdp":{"mode":1,"attached":[{"mode":1,"prog":{"id":52,"name":"xdp_main_prog"}}]}},
  {"ifindex":4,"ifname":"mgmt0","mtu":1500,"xdp":{"mode":2,"prog":{"id":7,"name":"xdp_other"}}},
  {"ifindex":5,"ifname":"fab0","mtu":1500}
])";

FirewallPath attached(uint64_t rx) { return FirewallPath{{"lan0", "wan0"}, {}, rx, ""}; }

TEST(PathCheck, FindsSluiceInterfacesAndOtherPrograms) {
    std::vector<std::string> other;
    auto found = interfaces_with_xdp(kLinks, "xdp_main_prog", &other);
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ(found.value(), (std::vector<std::string>{"lan0", "wan0"}));
    EXPECT_EQ(other, (std::vector<std::string>{"mgmt0: xdp_other"}));
}

TEST(PathCheck, NamesAreComparedAsTheKernelKeepsThem) {
    // The kernel keeps 15 characters of a program name.
    auto found = interfaces_with_xdp(R"([{"ifname":"x0","xdp":{"prog":{"name":"xdp_a_very_long"}}}])",
                                     "xdp_a_very_long_name");
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found.value(), (std::vector<std::string>{"x0"}));
}

// The ids behind them (the observe benchmark reads the entry program's
// run time by id): single and multi-attach XDP, a TC filter.
TEST(PathCheck, ProgramIdsOfTheHooks) {
    auto lan = xdp_prog_id(kLinks, "lan0", "xdp_main_prog");
    ASSERT_TRUE(lan.ok()) << lan.error().message;
    EXPECT_EQ(lan.value(), std::optional<uint32_t>{41});
    auto wan = xdp_prog_id(kLinks, "wan0", "xdp_main_prog");
    ASSERT_TRUE(wan.ok());
    EXPECT_EQ(wan.value(), std::optional<uint32_t>{52}) << "multi-attach";
    EXPECT_EQ(xdp_prog_id(kLinks, "mgmt0", "xdp_main_prog").value(), std::nullopt) << "another program";
    EXPECT_EQ(xdp_prog_id(kLinks, "fab0", "xdp_main_prog").value(), std::nullopt) << "no XDP";
    EXPECT_EQ(xdp_prog_id(kLinks, "eth9", "xdp_main_prog").value(), std::nullopt) << "no such link";
    EXPECT_FALSE(xdp_prog_id("Error: nope", "lan0", "xdp_main_prog").ok());

    const std::string tc = R"([{"protocol":"all","pref":1307,"kind":"bpf","chain":0},)"
                           R"({"protocol":"all","pref":1307,"kind":"bpf","chain":0,"options":{"handle":"0x1",)"
                           R"("bpf_name":"sluice_tc","direct-action":true,"prog":{"id":812,"name":"tc_main_prog",)"
                           R"("tag":"ab","jited":1}}}])";
    auto id = tc_filter_prog_id(tc, "tc_main_prog");
    ASSERT_TRUE(id.ok()) << id.error().message;
    EXPECT_EQ(id.value(), std::optional<uint32_t>{812});
    EXPECT_TRUE(tc_filter_runs(tc, "tc_main_prog").value());
    EXPECT_EQ(tc_filter_prog_id("[]", "tc_main_prog").value(), std::nullopt);
    EXPECT_EQ(tc_filter_prog_id("", "tc_main_prog").value(), std::nullopt) << "no filters: tc prints nothing";
    EXPECT_FALSE(tc_filter_runs("", "tc_main_prog").value());
    EXPECT_FALSE(tc_filter_prog_id("Error: nope", "tc_main_prog").ok());
}

TEST(PathCheck, UnreadableOutputIsAnError) {
    EXPECT_FALSE(interfaces_with_xdp("Error: nope", "xdp_main_prog").ok());
    EXPECT_FALSE(interfaces_with_xdp(R"({"ifname":"lan0"})", "xdp_main_prog").ok());
    EXPECT_FALSE(stats_rx_packets(R"({"counters":{"forward":3}})").ok());
    auto rx = stats_rx_packets(R"({"counters":{"rx":1234,"forward":3}})");
    ASSERT_TRUE(rx.ok());
    EXPECT_EQ(rx.value(), 1234u);
}

TEST(PathCheck, SluiceRunNeedsAttachmentAndEnoughPackets) {
    // 6.5 GB received: at least 6.5e9 / 65536 = 99,182 frames through XDP.
    const double bytes = 6.5e9;
    EXPECT_EQ(minimum_packets(bytes), 99182u);
    EXPECT_TRUE(verify_sluice_in_path(attached(1000), attached(1000 + 99182), bytes, "fw0", "sluice IPv4").ok());

    auto few = verify_sluice_in_path(attached(1000), attached(1000 + 99181), bytes, "fw0", "sluice IPv4");
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.error().message.find("rx counter moved by 99181 packets, but 6500000000 bytes need at least 99182"),
              std::string::npos)
        << few.error().message;

    FirewallPath detached{{}, {"lan0: xdp_other"}, 5, ""};
    auto before = verify_sluice_in_path(detached, attached(10), bytes, "fw0", "sluice IPv4 (pass 1)");
    ASSERT_FALSE(before.ok());
    EXPECT_EQ(before.error().message,
              "sluice IPv4 (pass 1) was not measured through sluice on fw0: before the run, sluice's pipeline "
              "(xdp_main_prog at XDP or tc_main_prog at TC ingress) is attached on no interface; other XDP programs: lan0: xdp_other");
    EXPECT_FALSE(verify_sluice_in_path(attached(10), detached, bytes, "fw0", "x").ok()) << "detached during the run";

    FirewallPath no_stats{{"lan0"}, {}, std::nullopt, "no pinned stats"};
    auto unreadable = verify_sluice_in_path(no_stats, attached(10), bytes, "fw0", "x");
    ASSERT_FALSE(unreadable.ok());
    EXPECT_NE(unreadable.error().message.find("no pinned stats"), std::string::npos);
}

TEST(PathCheck, BaselineRunNeedsSluiceDetached) {
    EXPECT_TRUE(verify_sluice_detached(FirewallPath{{}, {}, std::nullopt, ""}, "fw0", "kernel IPv4").ok());
    auto s = verify_sluice_detached(attached(1), "fw0", "kernel IPv6 (pass 2)");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message,
              "kernel IPv6 (pass 2) would include sluice: on fw0, sluice is attached on lan0, wan0 although the "
              "baseline detached it");
}

}  // namespace
}  // namespace sluice::perftest
