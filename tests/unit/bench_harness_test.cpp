// The benchmark harness's own arithmetic and parsers (userspace/bench/): the
// schedule that interleaves configurations, medians and per-pass ratios,
// counter deltas, and the JSON of the tools it drives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "bench/connrate_run.h"
#include "bench/nft_firewall.h"
#include "bench/results.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"

using namespace sluice::bench;

TEST(BenchSchedule, EveryItemComesFirstOnceInNPasses) {
    std::vector<std::string> modes{"kernel", "sluice", "nat"};
    std::vector<std::string> firsts;
    for (int pass = 1; pass <= 3; ++pass) {
        auto order = rotated(modes, pass);
        ASSERT_EQ(order.size(), 3u);
        firsts.push_back(order.front());
    }
    EXPECT_EQ(firsts, modes);
    EXPECT_EQ(rotated(modes, 2), (std::vector<std::string>{"sluice", "nat", "kernel"}));
    EXPECT_EQ(families_for_pass(1), (std::vector<std::string>{"v4", "v6"}));
    EXPECT_EQ(families_for_pass(2), (std::vector<std::string>{"v6", "v4"}));
    EXPECT_EQ(alternated(std::vector<int>{1, 2, 3}, 2), (std::vector<int>{3, 2, 1}));
}

TEST(BenchResults, MedianMinMaxAndPerPassRatios) {
    EXPECT_EQ(format_spread(std::vector<double>{3, 1, 2}, 2), "2.00 (1.00–3.00)");
    EXPECT_EQ(format_spread(std::vector<double>{4, 1, 2, 3}, 1), "2.5 (1.0–4.0)");
    EXPECT_EQ(format_spread(std::vector<double>{}, 2), "-");
    // Ratios pair passes: pass 2 of a with pass 2 of b, never across passes;
    // a pass missing on either side (or a zero denominator) gives no ratio.
    std::map<int, double> a{{1, 10}, {2, 30}, {4, 8}};
    std::map<int, double> b{{1, 5}, {2, 10}, {3, 7}, {4, 0}};
    EXPECT_EQ(per_pass_ratios(a, b), (std::vector<double>{2, 3}));
}

TEST(BenchResults, SelectAndByPassReadTheRecords) {
    ResultLog log;  // in memory
    log.add({{"part", "b"}, {"pass", 1}, {"system", "kernel"}, {"family", "v4"}, {"gbps", 10.0}});
    log.add({{"part", "b"}, {"pass", 2}, {"system", "kernel"}, {"family", "v4"}, {"gbps", 12.0}});
    log.add({{"part", "b"}, {"pass", 1}, {"system", "sluice"}, {"family", "v4"}, {"gbps", 11.0}});
    log.add({{"part", "b"}, {"event", "setup"}});
    EXPECT_EQ(select(log.records(), {{"system", "kernel"}}).size(), 2u);
    auto k = by_pass(log.records(), {{"system", "kernel"}, {"family", "v4"}}, "gbps");
    EXPECT_EQ(k, (std::map<int, double>{{1, 10.0}, {2, 12.0}}));
    EXPECT_TRUE(by_pass(log.records(), {{"system", "kernel"}, {"family", "v6"}}, "gbps").empty());
}

TEST(BenchCounters, DeltaSumsAndSummary) {
    Counters before{{"rx", 10}, {"drop-x", 1}, {"pass-y", 5}};
    Counters after{{"rx", 25}, {"drop-x", 4}, {"pass-y", 5}, {"pass-z", 2}};
    auto d = counter_delta(before, after);
    EXPECT_EQ(d["rx"], 15u);
    EXPECT_EQ(d["pass-z"], 2u);
    EXPECT_EQ(sum_prefixed(d, "drop-"), 3u);
    EXPECT_EQ(sum_prefixed(d, "pass-"), 2u);
    EXPECT_EQ(nonzero_summary(d, {"pass-", "drop-"}), "drop-x=3,pass-z=2");
}

TEST(BenchTools, ConnrateJsonIsRead) {
    auto o = parse_connrate(
        R"({"completed": 1200, "seconds": 2.000, "per_second": 600.0, "attempts": 1210, "failures": {"connect": 3, "timeout": 2}, "latency_us": {"p50": 410, "p90": 800, "p99": 1500}, "next_offset": 9000})");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_DOUBLE_EQ(o->per_second, 600.0);
    EXPECT_EQ(o->completed, 1200u);
    EXPECT_EQ(o->failures, 5u);
    EXPECT_EQ(o->p99_us, 1500u);
    EXPECT_EQ(o->next_offset, 9000u);
    EXPECT_FALSE(parse_connrate("sluice_connrate: cannot bind"));
}

TEST(BenchTools, NftCountersAreSummedOverRules) {
    auto n = nft_counter_packets(R"({"nftables": [{"metainfo": {}}, {"table": {"name": "bench"}},
        {"rule": {"expr": [{"match": {}}, {"counter": {"packets": 7, "bytes": 700}}, {"accept": null}]}},
        {"rule": {"expr": [{"counter": {"packets": 5, "bytes": 50}}]}}, {"rule": {"expr": [{"accept": null}]}}]})");
    ASSERT_TRUE(n) << n.error().message;
    EXPECT_EQ(*n, 12u);
    EXPECT_FALSE(nft_counter_packets("Error: No such file or directory"));
}

// A run that fails before its first measurement (a bad option, a missing
// tool) leaves the previous run's results; the first record replaces them.
TEST(ResultLogFile, AnEarlierFileStaysUntilTheFirstRecord) {
    const std::string path = ::testing::TempDir() + "/results-" + std::to_string(::getpid()) + ".jsonl";
    {
        std::ofstream old(path);
        old << R"({"bench":"synflood","pass":1})" << "\n";
    }
    auto log = ResultLog::open(path, "synflood");
    ASSERT_TRUE(log) << log.error().message;
    auto before = ResultLog::read(path);
    ASSERT_TRUE(before);
    EXPECT_EQ(before->size(), 1u) << "opening alone must not truncate";
    log->add({{"pass", 2}});
    log->add({{"pass", 3}});
    auto after = ResultLog::read(path);
    ASSERT_TRUE(after);
    ASSERT_EQ(after->size(), 2u);
    EXPECT_EQ((*after)[0]["pass"], 2);
    EXPECT_EQ((*after)[1]["bench"], "synflood");
    std::remove(path.c_str());
    EXPECT_FALSE(ResultLog::open("/nonexistent-dir/x.jsonl", "synflood"));
}
