// Profile review: statuses against profiles/<env>.yaml ranges, bpf_printk
// at 0%, and the real profiles/ files parse.
#include <gtest/gtest.h>

#include <filesystem>

#include "perftest/perf_report.h"
#include "perftest/profile_review.h"

using namespace sluice::perftest;

namespace {

SymbolExpectation expect(const std::string& symbol, double lo, double hi, double red) {
    return SymbolExpectation{symbol, lo, hi, red, "meaning of " + symbol};
}

Profile profile_of(std::vector<std::pair<std::string, double>> entries) {
    Profile p;
    for (auto& [symbol, percent] : entries) {
        ProfileEntry e;
        e.symbol = symbol;
        e.raw = symbol;
        e.percent = percent;
        p.entries.push_back(e);
    }
    return p;
}

}  // namespace

TEST(PerftestReview, ClassifyEachStatus) {
    auto main_prog = expect("xdp_main_prog", 9, 14, 20);
    EXPECT_EQ(classify(main_prog, 11.0), SymbolStatus::ok);
    EXPECT_EQ(classify(main_prog, 9.0), SymbolStatus::ok);     // bounds are healthy
    EXPECT_EQ(classify(main_prog, 14.0), SymbolStatus::ok);
    EXPECT_EQ(classify(main_prog, 5.0), SymbolStatus::low);
    EXPECT_EQ(classify(main_prog, 16.0), SymbolStatus::high);
    EXPECT_EQ(classify(main_prog, 20.0), SymbolStatus::high);  // red flag is "above"
    EXPECT_EQ(classify(main_prog, 20.5), SymbolStatus::red_flag);
    EXPECT_EQ(classify(main_prog, std::nullopt), SymbolStatus::absent);
}

TEST(PerftestReview, BpfPrintkAbsentIsZeroAndOk) {
    auto printk = expect("bpf_printk", 0, 0, 1);
    EXPECT_EQ(classify(printk, std::nullopt), SymbolStatus::ok);
    EXPECT_EQ(classify(printk, 0.0), SymbolStatus::ok);
    EXPECT_EQ(classify(printk, 0.5), SymbolStatus::high);
    EXPECT_EQ(classify(printk, 55.0), SymbolStatus::red_flag);
}

TEST(PerftestReview, ReviewProfileAgainstExpectations) {
    ProfileExpectations e;
    e.symbols = {expect("xdp_main_prog", 9, 14, 20), expect("xdp_zone_prog", 7, 10, 15),
                 expect("htab_map_hash", 5, 8, 12), expect("xdp_nat_prog", 2, 5, 8), expect("bpf_printk", 0, 0, 1)};
    auto p = profile_of({{"xdp_main_prog", 12}, {"xdp_zone_prog", 16}, {"htab_map_hash", 9}});
    auto reviews = review_profile(p, e);
    ASSERT_EQ(reviews.size(), 5u);
    EXPECT_EQ(reviews[0].status, SymbolStatus::ok);
    EXPECT_EQ(reviews[1].status, SymbolStatus::red_flag);
    EXPECT_EQ(reviews[2].status, SymbolStatus::high);
    EXPECT_EQ(reviews[3].status, SymbolStatus::absent);
    EXPECT_FALSE(reviews[3].present);
    EXPECT_EQ(reviews[3].percent, 0.0);
    EXPECT_EQ(reviews[4].expected.symbol, "bpf_printk");
    EXPECT_EQ(reviews[4].status, SymbolStatus::ok);
    EXPECT_EQ(reviews[4].percent, 0.0);
    EXPECT_TRUE(any_red_flag(reviews));
    EXPECT_STREQ(to_string(SymbolStatus::red_flag), "red-flag");
}

TEST(PerftestReview, ParsesExpectationsYaml) {
    auto e = parse_profile_expectations(
        "environment: test\n"
        "source: by hand\n"
        "symbols:\n"
        "  - { symbol: xdp_main_prog, healthy: [9, 14], red-flag: 20, meaning: parsing }\n"
        "  - { symbol: bpf_printk, healthy: [0, 0], red-flag: 1, meaning: must be 0 }\n",
        "t.yaml");
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->environment, "test");
    ASSERT_EQ(e->symbols.size(), 2u);
    EXPECT_EQ(e->symbols[0].healthy_min, 9);
    EXPECT_EQ(e->symbols[0].healthy_max, 14);
    EXPECT_EQ(e->symbols[0].red_flag, 20);
    EXPECT_EQ(e->symbols[1].meaning, "must be 0");
}

TEST(PerftestReview, ExpectationErrorsNameFileLineAndField) {
    auto bad_range = parse_profile_expectations("symbols:\n  - { symbol: a, healthy: [5], red-flag: 9 }\n", "p.yaml");
    ASSERT_FALSE(bad_range);
    EXPECT_EQ(bad_range.error().message, "p.yaml:2:5: symbols[0].healthy: expected [min, max] in percent");
    auto red_below = parse_profile_expectations("symbols:\n  - { symbol: a, healthy: [5, 9], red-flag: 6 }\n", "p.yaml");
    ASSERT_FALSE(red_below);
    EXPECT_NE(red_below.error().message.find("red-flag: below the healthy range"), std::string::npos);
    auto not_number = parse_profile_expectations("symbols:\n  - { symbol: a, healthy: [x, 9], red-flag: 12 }\n", "p.yaml");
    ASSERT_FALSE(not_number);
    EXPECT_NE(not_number.error().message.find("healthy[0]: expected a number"), std::string::npos);
}

TEST(PerftestReview, CommittedProfilesParseAndCarryBpfPrintk) {
    std::filesystem::path dir = std::filesystem::path(SLUICE_TEST_DATA_DIR).parent_path().parent_path() / "profiles";
    int files = 0;
    for (const char* env : {"netns", "loss-cluster", "local-cluster"}) {
        auto e = load_profile_expectations((dir / (std::string(env) + ".yaml")).string());
        ASSERT_TRUE(e) << e.error().message;
        ++files;
        bool printk = false;
        for (const auto& s : e->symbols) {
            if (s.symbol == "bpf_printk") {
                printk = true;
                EXPECT_EQ(s.healthy_min, 0);
                EXPECT_EQ(s.healthy_max, 0);
            }
        }
        EXPECT_TRUE(printk) << env;
    }
    EXPECT_EQ(files, 3);
}
