// iperf3 -J output, captured from real runs on this machine
// (tests/data/perftest/capture.sh): sender/receiver rates, retransmits,
// stream count, and iperf3's own error results.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "perftest/iperf_result.h"

using sluice::perftest::parse_iperf_json;
namespace {
std::string fixture(const std::string& name) {
    std::ifstream in(std::string(SLUICE_TEST_DATA_DIR "/perftest/") + name);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}
}  // namespace

TEST(PerftestIperf, Ipv4SingleStream) {
    auto r = parse_iperf_json(fixture("iperf3_ipv4_single.json"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->streams, 1);
    EXPECT_EQ(r->remote_host, "198.18.100.200");
    EXPECT_EQ(r->version, "iperf 3.12");
    EXPECT_GT(r->sender_bps, 0);
    EXPECT_GT(r->receiver_bps, 0);
    EXPECT_GE(r->retransmits, 0);
    EXPECT_GT(r->seconds, 1.5);
}

TEST(PerftestIperf, Ipv6SingleStream) {
    auto r = parse_iperf_json(fixture("iperf3_ipv6_single.json"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->streams, 1);
    EXPECT_EQ(r->remote_host, "2001:2:0:100::200");
    EXPECT_GT(r->receiver_bps, 0);
}

TEST(PerftestIperf, MultiStreamUsesTheSumsNotOneStream) {
    auto r = parse_iperf_json(fixture("iperf3_ipv4_multi.json"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->streams, 4);
    // The exact totals of the captured run (end.sum_sent / end.sum_received).
    EXPECT_DOUBLE_EQ(r->sender_bps, 5934569826.582297);
    EXPECT_DOUBLE_EQ(r->receiver_bps, 5911194910.290957);
    EXPECT_EQ(r->retransmits, 152);
    EXPECT_DOUBLE_EQ(r->seconds, 2.019919);
}

TEST(PerftestIperf, Ipv6MultiStream) {
    auto r = parse_iperf_json(fixture("iperf3_ipv6_multi.json"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->streams, 4);
    EXPECT_EQ(r->remote_host, "2001:2:0:100::200");
    EXPECT_GT(r->sender_bps, 0);
    EXPECT_GE(r->sender_bps, r->receiver_bps * 0.9);
}

TEST(PerftestIperf, ErrorResultBecomesAnErrorWithIperfsWords) {
    auto r = parse_iperf_json(fixture("iperf3_error_refused.json"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "iperf3: unable to connect to server: Connection refused");
}

TEST(PerftestIperf, EmptyAndNonJsonOutputAreErrors) {
    EXPECT_EQ(parse_iperf_json("").error().message, "iperf3: no output");
    EXPECT_EQ(parse_iperf_json("Connecting to host 198.18.100.200").error().message, "iperf3: output is not JSON");
    auto r = parse_iperf_json(R"({"start": {}, "end": {}})");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("sum_sent"), std::string::npos);
}

TEST(PerftestIperf, BusyServerErrorIsPassedThrough) {
    auto r = parse_iperf_json(R"({"start":{},"intervals":[],"end":{},"error":"the server is busy running a test. try again later"})");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("busy"), std::string::npos);
}

TEST(PerftestIperf, ReceivedBytesAreTheReceiversSum) {
    auto r = parse_iperf_json(fixture("iperf3_ipv4_multi.json"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_GT(r->receiver_bytes, 0);
    // bits/s x seconds = bytes x 8, to within rounding of iperf3's own numbers.
    EXPECT_NEAR(r->receiver_bytes * 8, r->receiver_bps * r->seconds, r->receiver_bps * 0.01);
}

TEST(PerftestIperf, ServerPeerIsTheClientTheServerSaw) {
    auto v4 = sluice::perftest::parse_iperf_server_peer(fixture("iperf3_server_ipv4.json"));
    ASSERT_TRUE(v4) << v4.error().message;
    EXPECT_EQ(*v4, "198.18.1.10");
    auto v6 = sluice::perftest::parse_iperf_server_peer(fixture("iperf3_server_ipv6.json"));
    ASSERT_TRUE(v6) << v6.error().message;
    EXPECT_EQ(*v6, "2001:2:0:1::10");
    auto mapped = sluice::perftest::parse_iperf_server_peer(
        R"({"start": {"connected": [{"remote_host": "::ffff:198.18.100.1"}]}})");
    ASSERT_TRUE(mapped) << mapped.error().message;
    EXPECT_EQ(*mapped, "198.18.100.1");
    EXPECT_FALSE(sluice::perftest::parse_iperf_server_peer(R"({"start": {"connected": []}})"));
    EXPECT_FALSE(sluice::perftest::parse_iperf_server_peer("not json"));
}
