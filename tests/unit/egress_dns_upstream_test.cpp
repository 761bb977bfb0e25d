// Forwarding to the upstream resolvers (userspace/egress/upstream_client.h):
// failover on a timeout or a refusal, the upstream that answered last asked
// first next time, SERVFAIL-worthy failure within upstreams x timeout, TC
// answers asked again over TCP. Bounds on time are loose on purpose: they
// tell "moved on at once" or "waited one timeout" from "stalled for
// seconds", not how fast this machine is.
#include <gtest/gtest.h>

#include "egress/upstream_client.h"
#include "egress_dns_fake_upstream.h"

using namespace sluice::egress;
using namespace egress_test;
using std::chrono::milliseconds;

namespace {

std::vector<sluice::config::EgressUpstream> upstreams(const std::vector<std::string>& addresses) {
    std::string list;
    for (const auto& a : addresses) list += (list.empty() ? "\"" : ", \"") + a + "\"";
    auto policy = policy_from("  upstreams: [" + list + "]\n  scopes: { s: { from: trust } }\n");
    return policy->upstreams;
}

Query query(const std::string& name, ldns_rr_type type = LDNS_RR_TYPE_A) {
    auto parsed = parse_query(wire_of(make_query(name, type).get()));
    EXPECT_TRUE(std::holds_alternative<Query>(parsed));
    return std::move(std::get<Query>(parsed));
}

milliseconds since(Clock::time_point start) {
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

class EgressDnsUpstream : public ::testing::Test {
protected:
    void SetUp() override {
        live.add("host1.bench.test. 300 IN A 198.18.9.1");
        live.add("host1.bench.test. 300 IN AAAA 2001:2:0:9::1");
    }
    FakeUpstream live;
    UpstreamRotation rotation;
};

TEST_F(EgressDnsUpstream, ALiveUpstreamAnswersUnderARandomId) {
    Query q = query("host1.bench.test");
    std::set<uint16_t> ids;
    for (int i = 0; i < 8; ++i) {
        auto answer = exchange_blocking(upstreams({live.address()}), rotation, q, false, milliseconds(2000));
        ASSERT_TRUE(answer.ok()) << answer.error().message;
        EXPECT_EQ(answer->failed_attempts, 0u);
        EXPECT_EQ(answer_addresses(answer->response.get()), std::vector<std::string>{"198.18.9.1"});
        EXPECT_EQ(ldns_pkt_id(answer->response.get()), answer->id);
        ids.insert(answer->id);
    }
    EXPECT_GT(ids.size(), 1u);  // not one fixed id (8 equal random ids: 1 in 2^112)
    EXPECT_EQ(live.udp_queries(), 8);
}

TEST_F(EgressDnsUpstream, ADeadFirstUpstreamCostsItsTimeoutOnceThenTheLiveOneIsAskedFirst) {
    Blackhole dead;
    const auto list = upstreams({dead.address(), live.address()});
    Query q = query("host1.bench.test");
    auto start = Clock::now();
    auto first = exchange_blocking(list, rotation, q, false, milliseconds(300));
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->failed_attempts, 1u);
    EXPECT_LT(since(start), milliseconds(3000));  // one timeout, not a stall
    for (int i = 0; i < 3; ++i) {
        auto again = exchange_blocking(list, rotation, q, false, milliseconds(300));
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(again->failed_attempts, 0u);
    }
    EXPECT_EQ(dead.received(), 1);  // asked once, then skipped
    EXPECT_EQ(live.udp_queries(), 4);
}

TEST_F(EgressDnsUpstream, ARefusingUpstreamIsLeftAtOnceNotAfterTheTimeout) {
    const auto list = upstreams({closed_address(), live.address()});
    auto start = Clock::now();
    auto answer = exchange_blocking(list, rotation, query("host1.bench.test"), false, milliseconds(5000));
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(answer->failed_attempts, 1u);
    EXPECT_LT(since(start), milliseconds(4000));  // the ICMP error, not the 5 s timeout
}

TEST_F(EgressDnsUpstream, ARefusedTcpConnectionIsLeftAtOnceToo) {
    const auto list = upstreams({closed_address(), live.address()});
    auto start = Clock::now();
    auto answer = exchange_blocking(list, rotation, query("host1.bench.test"), true, milliseconds(5000));
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(answer->failed_attempts, 1u);
    EXPECT_LT(since(start), milliseconds(4000));
    EXPECT_EQ(live.tcp_queries(), 1);
}

TEST_F(EgressDnsUpstream, NoUpstreamAnsweringIsAnErrorWithinUpstreamsTimesTimeout) {
    Blackhole dead1, dead2;
    const auto list = upstreams({dead1.address(), closed_address(), dead2.address()});
    auto start = Clock::now();
    auto answer = exchange_blocking(list, rotation, query("host1.bench.test"), false, milliseconds(300));
    const auto took = since(start);
    ASSERT_FALSE(answer.ok());
    EXPECT_EQ(answer.error().code, sluice::ErrorCode::Timeout);
    EXPECT_NE(answer.error().message.find("3 attempts"), std::string::npos) << answer.error().message;
    EXPECT_LT(took, milliseconds(3 * 300 + 2000));
    EXPECT_EQ(dead1.received(), 1);
    EXPECT_EQ(dead2.received(), 1);
}

TEST_F(EgressDnsUpstream, NoUpstreamConfiguredFailsAtOnce) {
    auto answer = exchange_blocking({}, rotation, query("host1.bench.test"), false, milliseconds(300));
    ASSERT_FALSE(answer.ok());
    EXPECT_NE(answer.error().message.find("no upstream"), std::string::npos) << answer.error().message;
}

TEST_F(EgressDnsUpstream, ATruncatedUdpAnswerIsAskedAgainOverTcp) {
    live.truncate_over_udp("host1.bench.test");
    auto answer = exchange_blocking(upstreams({live.address()}), rotation, query("host1.bench.test"), false,
                                    milliseconds(2000));
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_FALSE(ldns_pkt_tc(answer->response.get()));
    EXPECT_EQ(answer_addresses(answer->response.get()), std::vector<std::string>{"198.18.9.1"});
    EXPECT_EQ(live.udp_queries(), 1);
    EXPECT_EQ(live.tcp_queries(), 1);
}

TEST_F(EgressDnsUpstream, ATcpQueryGoesUpstreamOverTcp) {
    auto answer = exchange_blocking(upstreams({live.address()}), rotation, query("host1.bench.test", LDNS_RR_TYPE_AAAA),
                                    true, milliseconds(2000));
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(answer_addresses(answer->response.get()), std::vector<std::string>{"2001:2:0:9::1"});
    EXPECT_EQ(live.udp_queries(), 0);
    EXPECT_EQ(live.tcp_queries(), 1);
}

}  // namespace
