// `sluice bench ha`'s own logic (userspace/bench/failover_outage,
// linux_ha_pair, ha_bench): what it reads from the endpoints' output (the
// iperf3 server's 0.1 s bins, ping's reply times), whose address is whose,
// and the report rendered from records alone.
#include <gtest/gtest.h>

#include <string>

#include "bench/benchmark.h"
#include "bench/failover_outage.h"
#include "bench/linux_ha_pair.h"
#include "cluster/netns_cluster.h"

using namespace sluice::bench;
using nlohmann::json;

namespace {

// An iperf3 server's -J output with these per-stream bytes per 0.1 s bin.
std::string server_json(const std::vector<std::vector<double>>& bins_by_stream, bool with_error = false) {
    json intervals = json::array();
    const size_t n = bins_by_stream.front().size();
    for (size_t i = 0; i < n; ++i) {
        json streams = json::array();
        for (size_t s = 0; s < bins_by_stream.size(); ++s)
            streams.push_back({{"socket", 5 + static_cast<int>(s)},
                               {"start", 0.1 * static_cast<double>(i)},
                               {"seconds", 0.1001},  // iperf3's timer is a little late
                               {"bytes", bins_by_stream[s][i]}});
        intervals.push_back({{"streams", streams}});
    }
    json doc{{"start", json::object()}, {"intervals", intervals}};
    if (with_error) doc["error"] = "the client has unexpectedly closed the connection";
    return doc.dump();
}

}  // namespace

TEST(BenchHaOutage, LongestEmptyRunPerStreamAndTheWorstStreamCounts) {
    // Stream 5 stalls 2 bins, stream 6 stalls 3 bins, both resume.
    auto out = parse_tcp_outage(server_json({{10, 10, 0, 0, 10, 10, 10, 10}, {10, 0, 10, 0, 0, 0, 10, 10}}), 0.6);
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_EQ(out->streams.size(), 2u);
    EXPECT_EQ(out->streams[0].longest_zero_bins, 2);
    EXPECT_EQ(out->streams[1].longest_zero_bins, 3);
    EXPECT_EQ(out->survived, 2);
    EXPECT_DOUBLE_EQ(out->longest_ms(), 300.0);
}

TEST(BenchHaOutage, AStreamThatNeverResumesDidNotSurvive) {
    auto out = parse_tcp_outage(server_json({{10, 10, 10, 0, 0, 0, 0, 0}, {10, 10, 10, 0, 10, 10, 10, 10}}, true), 0.6);
    ASSERT_TRUE(out) << out.error().message;  // the server's error does not hide its intervals
    EXPECT_EQ(out->survived, 1);
    EXPECT_EQ(out->streams[0].bytes_after, 0);
    EXPECT_GT(out->streams[1].bytes_after, 0);
    EXPECT_DOUBLE_EQ(out->longest_ms(), 500.0);
}

TEST(BenchHaOutage, NoStallIsZero) {
    auto out = parse_tcp_outage("iperf3: a warning line\n" + server_json({{10, 10, 10, 10}}), 0.2);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_DOUBLE_EQ(out->longest_ms(), 0.0);
    EXPECT_EQ(out->survived, 1);
}

TEST(BenchHaOutage, ServerWithoutIntervalsOrJsonIsAnError) {
    auto none = parse_tcp_outage(R"({"error": "unable to start listener for connections: Address already in use"})", 1);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("Address already in use"), std::string::npos);
    EXPECT_FALSE(parse_tcp_outage("iperf3: error - unable to connect", 1));
    EXPECT_FALSE(parse_tcp_outage("{ not json", 1));
}

TEST(BenchHaPing, LongestGapBetweenRepliesAndTheSummary) {
    const std::string text =
        "PING 198.18.100.200 (198.18.100.200) 56(84) bytes of data.\n"
        "[1796298452.500000] 64 bytes from 198.18.100.200: icmp_seq=1 ttl=63 time=0.03 ms\n"
        "[1796298452.510000] 64 bytes from 198.18.100.200: icmp_seq=2 ttl=63 time=0.03 ms\n"
        "[1796298452.580000] 64 bytes from 198.18.100.200: icmp_seq=9 ttl=63 time=0.03 ms\n"
        "[1796298452.590000] 64 bytes from 198.18.100.200: icmp_seq=10 ttl=63 time=0.03 ms\n"
        "\n--- 198.18.100.200 ping statistics ---\n"
        "10 packets transmitted, 4 received, 60% packet loss, time 90ms\n";
    auto g = parse_ping_gap(text);
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->replies, 4);
    EXPECT_NEAR(g->longest_gap_ms(), 70.0, 0.01);
    EXPECT_EQ(g->transmitted, 10);
    EXPECT_EQ(g->received, 4);
    EXPECT_DOUBLE_EQ(g->event_gap_ms, 0.0);  // no event: every gap is "other"
    EXPECT_NEAR(g->other_gap_ms, 70.0, 0.01);
    // A window inside the 70 ms gap: that gap is the failover's, the rest jitter.
    auto e = parse_ping_gap(text, 1796298452.55, 1796298452.56);
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_NEAR(e->event_gap_ms, 70.0, 0.01);
    EXPECT_NEAR(e->event_gap_from, 1796298452.51, 1e-6);
    EXPECT_NEAR(e->other_gap_ms, 10.0, 0.01);
    // A window that begins just before a reply and ends inside the long gap
    // (the node stopped a moment after the event): the long gap still counts.
    auto late = parse_ping_gap(text, 1796298452.505, 1796298452.52);
    ASSERT_TRUE(late) << late.error().message;
    EXPECT_NEAR(late->event_gap_ms, 70.0, 0.01);
    // A failover between two on-time replies costs a normal gap, though a
    // longer one elsewhere (jitter) is still the run's longest.
    auto on_time = parse_ping_gap(text, 1796298452.501, 1796298452.502);
    ASSERT_TRUE(on_time) << on_time.error().message;
    EXPECT_NEAR(on_time->event_gap_ms, 10.0, 0.01);
    EXPECT_NEAR(on_time->other_gap_ms, 70.0, 0.01);
    EXPECT_NEAR(on_time->longest_gap_ms(), 70.0, 0.01);
}

TEST(BenchHaPing, WithoutSummaryOrRepliesIsAnError) {
    EXPECT_FALSE(parse_ping_gap("[1.0] 64 bytes from x: icmp_seq=1\n[1.01] 64 bytes from x: icmp_seq=2\n"));
    EXPECT_FALSE(parse_ping_gap("3 packets transmitted, 0 received, 100% packet loss, time 20ms\n"));
}

TEST(BenchHaPair, HoldsAddressReadsIpJson) {
    const std::string j =
        R"([{"ifname":"lan0","addr_info":[{"family":"inet","local":"198.18.1.1","prefixlen":24},)"
        R"({"family":"inet","local":"198.18.1.254","prefixlen":24}]}])";
    EXPECT_TRUE(holds_address(j, "198.18.1.254"));
    EXPECT_FALSE(holds_address(j, "198.18.1.25"));
    EXPECT_FALSE(holds_address("not json", "198.18.1.254"));
}

TEST(BenchHaConfig, TheBenchmarksHeartbeatTimingIsWritten) {
    auto text = sluice::cluster::ha_cluster_config(5, 20);
    EXPECT_NE(text.find("heartbeat: { interval: 5ms, hold-time: 20ms }"), std::string::npos);
    EXPECT_NE(sluice::cluster::ha_cluster_config().find("interval: 20ms, hold-time: 100ms"), std::string::npos);
}

TEST(BenchHaReport, TableAndSideBySideFromRecordsAlone) {
    std::vector<json> records{
        {{"bench", "ha"}, {"event", "setup"}, {"passes", 2}, {"seconds", 20}, {"at", 6.0}, {"rate", "100M"},
         {"interval_ms", 5}, {"hold_ms", 20}},
    };
    auto rec = [](int pass, const char* sys, double outage, double gap, int survived) {
        return json{{"bench", "ha"},     {"pass", pass},          {"system", sys},       {"scenario", "crash"},
                    {"streams", 4},      {"family", "v4"},        {"survived", survived}, {"expected_flows", 4},
                    {"tcp_outage_ms", outage}, {"ping_gap_ms", gap}, {"ping_lost", 1},  {"takeover_ms", 9.0}};
    };
    records.push_back(rec(1, "sluice", 100, 30, 4));
    records.push_back(rec(1, "keepalived+conntrackd", 200, 120, 4));
    records.push_back(rec(2, "sluice", 200, 35, 4));
    records.push_back(rec(2, "keepalived+conntrackd", 200, 130, 3));
    Benchmark b = ha_benchmark();
    std::string text = b.report(records);
    EXPECT_NE(text.find("hold-time 20 ms"), std::string::npos) << text;
    EXPECT_NE(text.find("| crash | 4 | v4 | sluice | 8/8 | 150 (100–200) | 32.5 (30.0–35.0) |"), std::string::npos)
        << text;
    EXPECT_NE(text.find("| crash | 4 | v4 | keepalived+conntrackd | 7/8 | 200 (200–200) |"), std::string::npos) << text;
    EXPECT_NE(text.find("crash -P 4 v4: sluice's TCP outage shorter than the pair's in 1 of 2 passes, equal in 1, longer in 0; "
                        "its ping gap at most 30 ms in 1 of 2"),
              std::string::npos)
        << text;
}
