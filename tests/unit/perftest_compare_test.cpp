// Compare: medians and spreads, per-pass ratios, the gap, the table's rows
// and columns, and the JSON shape the integration test reads.
#include <gtest/gtest.h>

#include <sstream>

#include "perftest/compare.h"
#include "perftest/throughput.h"

using namespace sluice::perftest;
using sluice::cluster::GbpsRange;

namespace {

Measurement ok(Family f, const std::string& config, int pass, double gbps, long long retransmits = 10) {
    Measurement m;
    m.family = f;
    m.config = config;
    m.pass = pass;
    IperfResult r;
    r.receiver_bps = gbps * 1e9;
    r.sender_bps = gbps * 1e9 * 1.01;
    r.retransmits = retransmits;
    r.streams = 4;
    m.result = r;
    return m;
}

GbpsRange range(std::optional<double> lo, std::optional<double> hi) {
    GbpsRange r;
    r.min_gbps = lo;
    r.max_gbps = hi;
    return r;
}

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    std::string line;
    while (std::getline(in, line)) out.push_back(line);
    return out;
}

}  // namespace

TEST(PerftestStats, MedianMinMax) {
    auto s = summarize(std::vector<double>{3, 1, 2});
    EXPECT_EQ(s.median, 2);
    EXPECT_EQ(s.min, 1);
    EXPECT_EQ(s.max, 3);
    EXPECT_EQ(s.count, 3u);
    EXPECT_EQ(summarize(std::vector<double>{4, 1, 3, 2}).median, 2.5);
    EXPECT_EQ(summarize(std::vector<double>{}).count, 0u);
}

TEST(PerftestCompare, VersusExpected) {
    EXPECT_EQ(versus(range(8, 9), 8.5), "within");
    EXPECT_EQ(versus(range(8, 9), 7.9), "below");
    EXPECT_EQ(versus(range(8, 9), 9.1), "above");
    EXPECT_EQ(versus(range(22, std::nullopt), 30), "within");
    EXPECT_EQ(versus(range(std::nullopt, std::nullopt), 30), "");
    GbpsRange na;
    na.applicable = false;
    EXPECT_EQ(versus(na, 1), "");
}

TEST(PerftestCompare, GapAndTableWithoutBaseline) {
    CompareRun run;
    run.environment = "netns";
    run.families = {Family::ipv4, Family::ipv6};
    run.passes = 1;
    run.streams = 4;
    run.seconds = 10;
    run.expected_ipv4 = range(8, 9);
    run.expected_ipv6 = range(7, 8);
    run.measurements = {ok(Family::ipv4, "sluice", 1, 10.0, 152), ok(Family::ipv6, "sluice", 1, 9.0, 7)};
    auto s = summarize(run);
    ASSERT_TRUE(s.gap_percent);
    EXPECT_NEAR(*s.gap_percent, 10.0, 1e-9);
    ASSERT_TRUE(s.expected_gap_percent);
    EXPECT_NEAR(*s.expected_gap_percent, (8.5 - 7.5) / 8.5 * 100, 1e-9);   // middles of 8-9 and 7-8
    EXPECT_TRUE(s.all_ok);
    EXPECT_EQ(s.families[0].versus_expected, "above");
    EXPECT_EQ(s.families[1].versus_expected, "above");

    auto table = lines(render_compare(run, s));
    // Two lines of context, a blank, then header, rule, IPv4, IPv6, Gap.
    ASSERT_EQ(table.size(), 8u);
    EXPECT_EQ(table[3].rfind("| Protocol | Throughput", 0), 0u);
    EXPECT_NE(table[3].find("| Retransmits |"), std::string::npos);
    EXPECT_EQ(table[4].rfind("|---", 0), 0u);
    EXPECT_EQ(table[5].rfind("| IPv4     | 10.00 Gbps", 0), 0u) << table[5];
    EXPECT_NE(table[5].find("| 152 "), std::string::npos);
    EXPECT_NE(table[5].find("8-9 Gbps"), std::string::npos) << table[5];
    EXPECT_EQ(table[6].rfind("| IPv6     | 9.00 Gbps", 0), 0u) << table[6];
    EXPECT_EQ(table[7].rfind("| Gap      | 10.0%", 0), 0u) << table[7];
    // Every row of the table has the same number of cells.
    for (size_t i = 3; i < table.size(); ++i) EXPECT_EQ(std::count(table[i].begin(), table[i].end(), '|'), 6) << table[i];
}

TEST(PerftestCompare, BaselineRatiosArePerPass) {
    CompareRun run;
    run.environment = "netns";
    run.families = {Family::ipv4};
    run.baseline = "kernel";
    run.passes = 3;
    run.measurements = {ok(Family::ipv4, "sluice", 1, 9), ok(Family::ipv4, "kernel", 1, 10),
                        ok(Family::ipv4, "kernel", 2, 5),  ok(Family::ipv4, "sluice", 2, 4),
                        ok(Family::ipv4, "sluice", 3, 6), ok(Family::ipv4, "kernel", 3, 8)};
    auto s = summarize(run);
    const auto& f = s.families.at(0);
    EXPECT_EQ(f.gbps.median, 6);
    EXPECT_EQ(f.gbps.min, 4);
    EXPECT_EQ(f.gbps.max, 9);
    EXPECT_EQ(f.baseline_gbps.median, 8);
    // Ratios 0.9, 0.8, 0.75 -- not 6/8 of the medians.
    EXPECT_EQ(f.ratio.count, 3u);
    EXPECT_NEAR(f.ratio.median, 0.8, 1e-9);
    EXPECT_NEAR(f.ratio.min, 0.75, 1e-9);
    EXPECT_NEAR(f.ratio.max, 0.9, 1e-9);
    EXPECT_FALSE(s.gap_percent);

    std::string text = render_compare(run, s);
    EXPECT_NE(text.find("| Protocol | sluice"), std::string::npos) << text;
    EXPECT_NE(text.find("sluice / kernel"), std::string::npos);
    EXPECT_NE(text.find("0.80 (0.75–0.90)"), std::string::npos) << text;
    EXPECT_EQ(text.find("| Gap"), std::string::npos);   // one family: no gap row
}

TEST(PerftestCompare, FailedRunsAreCountedAndShown) {
    CompareRun run;
    run.environment = "netns";
    run.families = {Family::ipv4, Family::ipv6};
    Measurement bad;
    bad.family = Family::ipv6;
    bad.config = "sluice";
    bad.pass = 1;
    bad.error = "iperf3: unable to connect to server: Connection refused";
    run.measurements = {ok(Family::ipv4, "sluice", 1, 3), bad};
    auto s = summarize(run);
    EXPECT_FALSE(s.all_ok);
    EXPECT_EQ(s.families[1].failed, 1);
    EXPECT_FALSE(s.gap_percent);
    std::string text = render_compare(run, s);
    EXPECT_NE(text.find("failed [1 failed: iperf3: unable to connect"), std::string::npos) << text;
    auto j = compare_to_json(run, s);
    EXPECT_EQ(j["ok"], false);
    EXPECT_EQ(j["table"][1]["failed"], 1);
    EXPECT_TRUE(j["table"][1]["throughput_gbps"].is_null());
}

TEST(PerftestCompare, JsonShape) {
    CompareRun run;
    run.environment = "netns";
    run.families = {Family::ipv4, Family::ipv6};
    run.baseline = "nftables";
    run.passes = 1;
    run.quick = true;
    run.streams = 1;
    run.seconds = 3;
    run.measurements = {ok(Family::ipv4, "sluice", 1, 4), ok(Family::ipv6, "sluice", 1, 3),
                        ok(Family::ipv4, "nftables", 1, 5), ok(Family::ipv6, "nftables", 1, 4)};
    auto j = compare_to_json(run, summarize(run));
    EXPECT_EQ(j["environment"], "netns");
    EXPECT_EQ(j["baseline"], "nftables");
    EXPECT_EQ(j["quick"], true);
    EXPECT_EQ(j["ok"], true);
    ASSERT_EQ(j["table"].size(), 2u);
    EXPECT_EQ(j["table"][0]["protocol"], "IPv4");
    EXPECT_EQ(j["table"][1]["protocol"], "IPv6");
    EXPECT_DOUBLE_EQ(j["table"][0]["throughput_gbps"]["median"].get<double>(), 4.0);
    EXPECT_DOUBLE_EQ(j["table"][0]["ratio"]["median"].get<double>(), 0.8);
    EXPECT_DOUBLE_EQ(j["gap_percent"].get<double>(), 25.0);
    EXPECT_EQ(j["runs"].size(), 4u);
    EXPECT_EQ(j["runs"][2]["config"], "nftables");
}

TEST(PerftestThroughput, ClientArgv) {
    EXPECT_EQ(iperf_client_argv("198.18.100.200", Family::ipv4, 4, 10, true),
              (std::vector<std::string>{"iperf3", "-c", "198.18.100.200", "-p", "5201", "-P", "4", "-t", "10", "-J"}));
    EXPECT_EQ(iperf_client_argv("2001:2:0:100::200", Family::ipv6, 1, 3, false),
              (std::vector<std::string>{"iperf3", "-6", "-c", "2001:2:0:100::200", "-p", "5201", "-P", "1", "-t", "3"}));
}
