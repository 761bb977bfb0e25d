// `sluice top`'s computation without maps: rates from two snapshots of the
// stats map, their order, the top drop reasons, counter resets; the JSON
// sample's shape and the text form.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/top.h"
#include "loader/stat_names.h"

using namespace sluice;
using namespace sluice::cli;
using json = nlohmann::ordered_json;

namespace {

std::vector<stat_counter> zeros() { return std::vector<stat_counter>(STAT_REASON_COUNT, stat_counter{0, 0}); }

std::vector<std::string> names(const std::vector<TopRate>& rates) {
    std::vector<std::string> out;
    for (const auto& r : rates) out.push_back(r.name);
    return out;
}

const TopRate* find(const TopRates& r, const std::string& name) {
    for (const auto& rate : r.rates)
        if (rate.name == name) return &rate;
    return nullptr;
}

}  // namespace

TEST(CliTop, OnlyCountersThatMovedArePresentWithTheirRates) {
    auto before = zeros(), after = zeros();
    before[STAT_RX] = {1000, 0};
    after[STAT_RX] = {1400, 0};
    before[STAT_FORWARD] = {500, 50000};
    after[STAT_FORWARD] = {700, 90000};
    before[STAT_DROP_POLICY_DENY] = {10, 1280};
    after[STAT_DROP_POLICY_DENY] = {10, 1280};  // did not move
    after[STAT_SESSION_CREATED] = {4, 0};

    TopRates r = compute_top_rates(before, after, 2.0);
    EXPECT_EQ(names(r.rates), (std::vector<std::string>{"rx", "forward", "session-created"}));
    const TopRate* rx = find(r, "rx");
    ASSERT_NE(rx, nullptr);
    EXPECT_EQ(rx->packets, 400u);
    EXPECT_DOUBLE_EQ(rx->packets_per_s, 200.0);
    EXPECT_EQ(rx->kind, "info");
    EXPECT_FALSE(rx->bytes_per_s.has_value()) << "rx counts no bytes";
    const TopRate* fwd = find(r, "forward");
    ASSERT_NE(fwd, nullptr);
    EXPECT_DOUBLE_EQ(fwd->packets_per_s, 100.0);
    ASSERT_TRUE(fwd->bytes_per_s.has_value()) << "forward counts bytes";
    EXPECT_DOUBLE_EQ(*fwd->bytes_per_s, 20000.0);
    EXPECT_FALSE(fwd->reset);
    EXPECT_TRUE(r.top_drops.empty());
    EXPECT_EQ(r.drop_packets, 0u);
}

TEST(CliTop, SortedByPacketsPerSecondThenBitsThenName) {
    auto before = zeros(), after = zeros();
    after[STAT_DROP_FILTER] = {30, 3000};
    after[STAT_DROP_POLICY_DENY] = {30, 6000};     // same packets, more bytes: first
    after[STAT_PASS_LOCAL] = {5, 500};
    after[STAT_SESSION_HIT] = {7, 0};
    after[STAT_DROP_TCP_NO_SESSION] = {7, 0};      // ties with session-hit (0 bits/s): by name
    after[STAT_FLOW_CACHE_HIT] = {5, 0};           // ties with pass-local's packets, fewer bits: after it
    after[STAT_FIB_LOOKUP] = {5, 0};               // ties with flow-cache-hit entirely: by name
    TopRates r = compute_top_rates(before, after, 1.0);
    EXPECT_EQ(names(r.rates), (std::vector<std::string>{"drop-policy-deny", "drop-filter", "drop-tcp-no-session",
                                                        "session-hit", "pass-local", "fib-lookup", "flow-cache-hit"}));
}

TEST(CliTop, TopDropsAreTheFiveBusiestDropReasons) {
    auto before = zeros(), after = zeros();
    const int drops[] = {STAT_DROP_POLICY_DENY, STAT_DROP_POLICY_DEFAULT, STAT_DROP_POLICY_REJECT,
                         STAT_DROP_FILTER,      STAT_DROP_HOST_INBOUND,   STAT_DROP_TCP_NO_SESSION,
                         STAT_DROP_LAND};
    uint64_t packets = 100;
    for (int d : drops) {  // 100, 90, ..., 40 packets
        after[d] = {packets, packets * 100};
        packets -= 10;
    }
    after[STAT_RX] = {10000, 0};       // info: never a drop
    after[STAT_PASS_LOCAL] = {5000, 1};  // pass: never a drop
    TopRates r = compute_top_rates(before, after, 1.0);
    EXPECT_EQ(names(r.top_drops), (std::vector<std::string>{"drop-policy-deny", "drop-policy-default",
                                                            "drop-policy-reject", "drop-filter", "drop-host-inbound"}));
    for (const auto& d : r.top_drops) EXPECT_EQ(d.kind, "drop");
    EXPECT_EQ(r.drop_packets, 100u + 90 + 80 + 70 + 60 + 50 + 40);
    EXPECT_EQ(r.rates.size(), 9u) << "every moved counter is listed, not only the top";
    EXPECT_EQ(r.rates.front().name, "rx");

    TopRates two = compute_top_rates(before, after, 1.0, 2);
    EXPECT_EQ(names(two.top_drops), (std::vector<std::string>{"drop-policy-deny", "drop-policy-default"}));
}

TEST(CliTop, ACounterThatWentBackwardsWasResetAndCountsFromZero) {
    auto before = zeros(), after = zeros();
    before[STAT_RX] = {1000000, 0};
    after[STAT_RX] = {300, 0};  // the maps were re-created (down + run)
    before[STAT_DROP_POLICY_DENY] = {500, 64000};
    after[STAT_DROP_POLICY_DENY] = {20, 2560};
    before[STAT_FORWARD] = {10, 1000};
    after[STAT_FORWARD] = {12, 900};  // bytes went back: a reset too
    before[STAT_SESSION_HIT] = {42, 0};
    after[STAT_SESSION_HIT] = {0, 0};  // reset to zero: nothing moved since
    TopRates r = compute_top_rates(before, after, 2.0);
    const TopRate* rx = find(r, "rx");
    ASSERT_NE(rx, nullptr);
    EXPECT_TRUE(rx->reset);
    EXPECT_EQ(rx->packets, 300u);
    EXPECT_DOUBLE_EQ(rx->packets_per_s, 150.0);
    const TopRate* deny = find(r, "drop-policy-deny");
    ASSERT_NE(deny, nullptr);
    EXPECT_TRUE(deny->reset);
    EXPECT_DOUBLE_EQ(deny->packets_per_s, 10.0);
    EXPECT_DOUBLE_EQ(*deny->bytes_per_s, 1280.0);
    const TopRate* fwd = find(r, "forward");
    ASSERT_NE(fwd, nullptr);
    EXPECT_TRUE(fwd->reset);
    EXPECT_EQ(fwd->packets, 12u);
    EXPECT_DOUBLE_EQ(*fwd->bytes_per_s, 450.0);
    EXPECT_EQ(find(r, "session-hit"), nullptr);
    for (const auto& rate : r.rates) EXPECT_GE(rate.packets_per_s, 0.0);
}

TEST(CliTop, ShortOrMissingSnapshotsAndZeroIntervalAreSafe) {
    auto after = zeros();
    after[STAT_DROP_LAND] = {8, 800};
    TopRates r = compute_top_rates({}, after, 0.0);  // no before (counts from 0), no elapsed time (1 s)
    ASSERT_EQ(r.rates.size(), 1u);
    EXPECT_DOUBLE_EQ(r.rates[0].packets_per_s, 8.0);
    EXPECT_FALSE(r.rates[0].reset);
    EXPECT_TRUE(compute_top_rates(after, {}, 1.0).rates.empty());
    EXPECT_TRUE(compute_top_rates(after, after, 1.0).rates.empty());
}

TEST(CliTop, JsonSampleShape) {
    auto before = zeros(), after = zeros();
    after[STAT_DROP_POLICY_DENY] = {1000, 128000};
    after[STAT_DROP_POLICY_DEFAULT] = {3000, 384000};
    after[STAT_SESSION_HIT] = {500, 0};
    TopRates r = compute_top_rates(before, after, 2.0);
    TopSessions s;
    s.flows_v4 = 12;
    s.flows_v6 = 3;
    s.fill = SessionTableFill{.entries_v4 = 24, .entries_v6 = 6, .capacity = 1000};
    json j = top_sample_json("2026-12-05T23:10:01.123Z", 2.0004, s, r);
    EXPECT_EQ(j.at("time"), "2026-12-05T23:10:01.123Z");
    EXPECT_DOUBLE_EQ(j.at("interval_s").get<double>(), 2.0);
    EXPECT_EQ(j.at("sessions").at("ipv4"), 12);
    EXPECT_EQ(j.at("sessions").at("ipv6"), 3);
    EXPECT_DOUBLE_EQ(j.at("sessions").at("table").at("ipv4").at("fill").get<double>(), 0.024);
    ASSERT_EQ(j.at("rates").size(), 3u);
    const json& first = j.at("rates")[0];
    EXPECT_EQ(first.at("reason"), "drop-policy-default");
    EXPECT_EQ(first.at("kind"), "drop");
    EXPECT_DOUBLE_EQ(first.at("packets_per_s").get<double>(), 1500.0);
    EXPECT_DOUBLE_EQ(first.at("bytes_per_s").get<double>(), 192000.0);
    EXPECT_FALSE(first.contains("reset"));
    EXPECT_TRUE(j.at("rates")[2].at("bytes_per_s").is_null()) << "session-hit counts no bytes";
    ASSERT_EQ(j.at("top_drops").size(), 2u);
    EXPECT_EQ(j.at("top_drops")[1].at("reason"), "drop-policy-deny");
    EXPECT_DOUBLE_EQ(j.at("top_drops")[0].at("share").get<double>(), 0.75);
    EXPECT_DOUBLE_EQ(j.at("top_drops")[1].at("share").get<double>(), 0.25);
    EXPECT_EQ(j.begin().key(), "time") << "keys in the documented order";
    // One line per sample: the dump has no newline.
    EXPECT_EQ(j.dump().find('\n'), std::string::npos);
}

TEST(CliTop, TextSample) {
    auto before = zeros(), after = zeros();
    after[STAT_FORWARD] = {2000, 2000 * 1500};
    after[STAT_DROP_POLICY_DENY] = {1000, 128000};
    after[STAT_RX] = {3000, 0};
    before[STAT_DROP_FILTER] = {50, 5000};
    after[STAT_DROP_FILTER] = {10, 1000};
    TopRates r = compute_top_rates(before, after, 1.0);
    TopSessions s;
    s.flows_v4 = 5;
    s.fill = SessionTableFill{.entries_v4 = 10, .entries_v6 = 0, .capacity = 200};
    std::ostringstream out;
    print_top_sample(out, "default", "2026-12-05T23:10:01.123Z", 1.0, s, r);
    const std::string text = out.str();
    EXPECT_NE(text.find("2026-12-05T23:10:01.123Z  instance default"), std::string::npos) << text;
    EXPECT_NE(text.find("sessions IPv4 5, IPv6 0  table IPv4 5.0%, IPv6 0.0% of 200 entries"), std::string::npos)
        << text;
    EXPECT_NE(text.find("PACKETS/S"), std::string::npos);
    EXPECT_NE(text.find("24.0 Mbit/s"), std::string::npos) << "forward: 3 MB/s\n" << text;
    EXPECT_NE(text.find("(counter reset)"), std::string::npos) << text;
    const size_t table = text.find("REASON"), drops = text.find("top drop reasons:");
    ASSERT_NE(drops, std::string::npos);
    EXPECT_LT(text.find("rx "), text.find("forward "));
    EXPECT_LT(text.find("forward "), text.find("drop-policy-deny "));
    EXPECT_LT(table, drops);
    EXPECT_NE(text.find("1. drop-policy-deny", drops), std::string::npos) << text;
    EXPECT_NE(text.find("2. drop-filter", drops), std::string::npos) << text;

    std::ostringstream quiet;
    print_top_sample(quiet, "default", "t", 1.0, s, compute_top_rates(after, after, 1.0));
    EXPECT_NE(quiet.str().find("(no counter moved)"), std::string::npos);
    EXPECT_NE(quiet.str().find("top drop reasons: none"), std::string::npos);
}

TEST(CliTop, BitsPerSecondText) {
    EXPECT_EQ(bits_per_s_text(0), "0 bit/s");
    EXPECT_EQ(bits_per_s_text(100), "800 bit/s");
    EXPECT_EQ(bits_per_s_text(125), "1.00 kbit/s");
    EXPECT_EQ(bits_per_s_text(1280), "10.2 kbit/s");
    EXPECT_EQ(bits_per_s_text(125e6), "1.00 Gbit/s");
    EXPECT_EQ(bits_per_s_text(3e6), "24.0 Mbit/s");
    EXPECT_EQ(bits_per_s_text(125e6 * 400), "400 Gbit/s");
}
