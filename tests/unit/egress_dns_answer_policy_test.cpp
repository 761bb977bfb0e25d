// The egress proxy's decisions without sockets (userspace/egress/
// answer_policy.h): a query's name against the scope's ordered rules and the
// doh-blocklist, and an upstream's answer as a whole: its CNAME chain, the
// addresses it teaches the datapath (TTL clamped), the TTLs the client sees.
#include <gtest/gtest.h>

#include "egress/answer_policy.h"
#include "egress_dns_fake_upstream.h"

using namespace sluice::egress;
using namespace egress_test;
using Kind = AnswerDecision::Kind;

namespace {

const char* kPolicy = R"yaml(
  upstreams: [127.0.0.1]
  learned-ttl: { minimum: 30s, maximum: 10m, grace: 10s }
  doh-blocklist: ["*.doh.bench.test"]
  scopes:
    builds:
      from: trust
      rules:
        - { action: allow, name: mirror.bench.test }
        - { action: deny, name: "*.bench.test" }
        - { action: allow, name: [cdn.test, "*.cdn.test"] }
    guests:
      from: untrust
      default: allow
      rules:
        - { action: deny, name: "*.bench.test" }
        - { action: allow, name: mirror.bench.test }
)yaml";

class EgressDnsAnswerPolicy : public ::testing::Test {
protected:
    std::shared_ptr<const sluice::config::Egress> policy = policy_from(kPolicy);
    const sluice::config::EgressScope& builds() { return policy->scopes.at(0); }
    const sluice::config::EgressScope& guests() { return policy->scopes.at(1); }

    static Query query(const std::string& name, ldns_rr_type type = LDNS_RR_TYPE_A, uint16_t id = 0x1111) {
        auto parsed = parse_query(wire_of(make_query(name, type, id).get()));
        EXPECT_TRUE(std::holds_alternative<Query>(parsed));
        return std::move(std::get<Query>(parsed));
    }

    // The upstream's answer to `q`, asked under `upstream_id`.
    static Packet response(const Query& q, uint16_t upstream_id, const std::vector<std::string>& records,
                           ldns_pkt_rcode rcode = LDNS_RCODE_NOERROR) {
        Packet r(ldns_pkt_new());
        ldns_pkt_set_id(r.get(), upstream_id);
        ldns_pkt_set_qr(r.get(), true);
        ldns_pkt_set_ra(r.get(), true);
        ldns_pkt_set_rcode(r.get(), rcode);
        ldns_pkt_push_rr(r.get(), LDNS_SECTION_QUESTION, ldns_rr_clone(q.question()));
        for (const auto& text : records) ldns_pkt_push_rr(r.get(), LDNS_SECTION_ANSWER, rr_from(text));
        return r;
    }

    AnswerDecision decide(const sluice::config::EgressScope& scope, const Query& q,
                          const std::vector<std::string>& records, ldns_pkt_rcode rcode = LDNS_RCODE_NOERROR) {
        return decide_answer(*policy, scope, q, response(q, 0x7777, records, rcode), 0x7777);
    }

    static std::string text(const LearnedAddress& a) {
        char buf[INET6_ADDRSTRLEN] = {};
        inet_ntop(a.family, a.address.data(), buf, sizeof(buf));
        return buf;
    }

    static std::vector<uint32_t> answer_ttls(const ldns_pkt* p) {
        std::vector<uint32_t> out;
        for (size_t i = 0; i < ldns_rr_list_rr_count(ldns_pkt_answer(p)); ++i)
            out.push_back(ldns_rr_ttl(ldns_rr_list_rr(ldns_pkt_answer(p), i)));
        return out;
    }
};

TEST_F(EgressDnsAnswerPolicy, AWildcardDenyAndAnExactAllowAdmitOnlyThatHostInEitherOrder) {
    // builds: the exact allow before the wildcard deny: only that host passes.
    auto v = decide_query_name(*policy, builds(), "mirror.bench.test");
    EXPECT_TRUE(v.allowed);
    EXPECT_EQ(v.rule, &builds().rules[0]);
    v = decide_query_name(*policy, builds(), "other.bench.test");
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.rule, &builds().rules[1]);
    EXPECT_FALSE(decide_query_name(*policy, builds(), "unlisted.test").allowed);  // the default: deny
    EXPECT_EQ(decide_query_name(*policy, builds(), "unlisted.test").rule, nullptr);
    // guests: the wildcard deny comes first; the exact allow after it is more
    // specific and still admits that one host, and only it.
    v = decide_query_name(*policy, guests(), "mirror.bench.test");
    EXPECT_TRUE(v.allowed);
    EXPECT_EQ(v.rule, &guests().rules[1]);
    v = decide_query_name(*policy, guests(), "other.bench.test");
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.rule, &guests().rules[0]);
    EXPECT_TRUE(decide_query_name(*policy, guests(), "unlisted.test").allowed);  // the default: allow
}

TEST_F(EgressDnsAnswerPolicy, TheDohBlocklistDeniesForEveryScopeBeforeItsRules) {
    auto v = decide_query_name(*policy, guests(), "dns.doh.bench.test");
    EXPECT_FALSE(v.allowed);
    EXPECT_TRUE(v.blocklisted);
    EXPECT_FALSE(decide_query_name(*policy, builds(), "dns.doh.bench.test").allowed);
}

TEST_F(EgressDnsAnswerPolicy, ANameThePolicyCannotExpressIsDenied) {
    EXPECT_FALSE(decide_query_name(*policy, guests(), std::nullopt).allowed);
    Query q = query("bad\\032name.test");  // a space inside a label
    EXPECT_FALSE(q.normalized_name.has_value());
    EXPECT_EQ(decide(guests(), q, {"bad\\032name.test. 60 IN A 198.18.9.1"}).kind, Kind::deny);
}

TEST_F(EgressDnsAnswerPolicy, AnAllowedAnswerTeachesItsAddressesWithClampedTtls) {
    Query q = query("mirror.bench.test", LDNS_RR_TYPE_A, 0x4242);
    auto d = decide(builds(), q,
                    {"mirror.bench.test. 5 IN A 198.18.9.1", "mirror.bench.test. 86400 IN A 198.18.9.2",
                     "mirror.bench.test. 120 IN A 198.18.9.3"});
    ASSERT_EQ(d.kind, Kind::relay) << d.reason;
    ASSERT_EQ(d.addresses.size(), 3u);
    EXPECT_EQ(text(d.addresses[0]), "198.18.9.1");
    EXPECT_EQ(d.addresses[0].family, AF_INET);
    EXPECT_EQ(d.addresses[0].ttl, std::chrono::seconds(30));   // raised to the minimum
    EXPECT_EQ(d.addresses[1].ttl, std::chrono::seconds(600));  // cut to the maximum
    EXPECT_EQ(d.addresses[2].ttl, std::chrono::seconds(120));
    for (const auto& a : d.addresses) EXPECT_EQ(a.rule, &builds().rules[0]);
    // The client's copy: its own id; no TTL above the maximum (it must not
    // cache an address longer than the datapath keeps it), the short one kept.
    EXPECT_EQ(ldns_pkt_id(d.answer.get()), 0x4242);
    EXPECT_EQ(answer_ttls(d.answer.get()), (std::vector<uint32_t>{5, 600, 120}));
    EXPECT_EQ(answer_addresses(d.answer.get()),
              (std::vector<std::string>{"198.18.9.1", "198.18.9.2", "198.18.9.3"}));
}

TEST_F(EgressDnsAnswerPolicy, AaaaRecordsAreLearnedAsIpv6) {
    Query q = query("mirror.bench.test", LDNS_RR_TYPE_AAAA);
    auto d = decide(builds(), q, {"mirror.bench.test. 300 IN AAAA 2001:2:0:9::7"});
    ASSERT_EQ(d.kind, Kind::relay) << d.reason;
    ASSERT_EQ(d.addresses.size(), 1u);
    EXPECT_EQ(d.addresses[0].family, AF_INET6);
    EXPECT_EQ(text(d.addresses[0]), "2001:2:0:9::7");
    EXPECT_EQ(d.addresses[0].ttl, std::chrono::seconds(300));
}

TEST_F(EgressDnsAnswerPolicy, TheDefaultThatAllowedANameIsNoRule) {
    Query q = query("www.unlisted.test");
    auto d = decide(guests(), q, {"www.unlisted.test. 300 IN A 198.18.9.9"});
    ASSERT_EQ(d.kind, Kind::relay);
    ASSERT_EQ(d.addresses.size(), 1u);
    EXPECT_EQ(d.addresses[0].rule, nullptr);
}

TEST_F(EgressDnsAnswerPolicy, AnAllowedCnameChainLearnsTheLastNamesAddressesUnderItsRule) {
    Query q = query("cdn.test");
    auto d = decide(builds(), q,
                    {"cdn.test. 300 IN CNAME edge.cdn.test.", "edge.cdn.test. 300 IN CNAME node7.cdn.test.",
                     "node7.cdn.test. 60 IN A 198.18.9.7"});
    ASSERT_EQ(d.kind, Kind::relay) << d.reason;
    EXPECT_EQ(d.chain, (std::vector<std::string>{"cdn.test", "edge.cdn.test", "node7.cdn.test"}));
    ASSERT_EQ(d.addresses.size(), 1u);
    EXPECT_EQ(text(d.addresses[0]), "198.18.9.7");
    EXPECT_EQ(d.addresses[0].rule, &builds().rules[2]);
}

TEST_F(EgressDnsAnswerPolicy, ACnameToADeniedNameDeniesTheAnswerAndTeachesNothing) {
    Query q = query("mirror.bench.test");
    auto d = decide(builds(), q,
                    {"mirror.bench.test. 300 IN CNAME cache.bench.test.", "cache.bench.test. 300 IN A 198.18.9.5"});
    EXPECT_EQ(d.kind, Kind::deny);
    EXPECT_TRUE(d.addresses.empty());
    EXPECT_FALSE(d.answer);
    EXPECT_NE(d.reason.find("cache.bench.test"), std::string::npos) << d.reason;
    EXPECT_NE(d.reason.find("rules[1]"), std::string::npos) << d.reason;
}

TEST_F(EgressDnsAnswerPolicy, ACnameToABlocklistedNameIsDeniedEvenUnderADefaultAllow) {
    Query q = query("innocent.test");
    auto d = decide(guests(), q,
                    {"innocent.test. 300 IN CNAME dns.doh.bench.test.", "dns.doh.bench.test. 300 IN A 198.18.9.53"});
    EXPECT_EQ(d.kind, Kind::deny);
    EXPECT_NE(d.reason.find("doh-blocklist"), std::string::npos) << d.reason;
}

TEST_F(EgressDnsAnswerPolicy, AddressesOfNamesOffTheChainAreNotLearned) {
    Query q = query("mirror.bench.test");
    auto d = decide(builds(), q,
                    {"mirror.bench.test. 300 IN A 198.18.9.1", "elsewhere.test. 300 IN A 198.18.66.6"});
    ASSERT_EQ(d.kind, Kind::relay);
    ASSERT_EQ(d.addresses.size(), 1u);
    EXPECT_EQ(text(d.addresses[0]), "198.18.9.1");
}

TEST_F(EgressDnsAnswerPolicy, NamesCompareCaseInsensitively) {
    Query q = query("MIRROR.Bench.TEST");
    EXPECT_EQ(q.normalized_name, "mirror.bench.test");
    auto d = decide(builds(), q, {"Mirror.BENCH.test. 300 IN A 198.18.9.1"});
    ASSERT_EQ(d.kind, Kind::relay) << d.reason;
    EXPECT_EQ(d.addresses.size(), 1u);
}

TEST_F(EgressDnsAnswerPolicy, ARepeatedAddressIsLearnedOnceWithItsLongestTtl) {
    Query q = query("cdn.test");
    auto d = decide(builds(), q,
                    {"cdn.test. 300 IN CNAME edge.cdn.test.", "cdn.test. 40 IN A 198.18.9.1",
                     "edge.cdn.test. 400 IN A 198.18.9.1"});
    ASSERT_EQ(d.kind, Kind::relay) << d.reason;
    ASSERT_EQ(d.addresses.size(), 1u);
    EXPECT_EQ(d.addresses[0].ttl, std::chrono::seconds(400));
}

TEST_F(EgressDnsAnswerPolicy, ALoopingOrOverlongChainIsServfail) {
    Query q = query("cdn.test");
    auto loop = decide(builds(), q, {"cdn.test. 300 IN CNAME a.cdn.test.", "a.cdn.test. 300 IN CNAME cdn.test."});
    EXPECT_EQ(loop.kind, Kind::servfail);
    EXPECT_NE(loop.reason.find("loop"), std::string::npos) << loop.reason;

    auto chain = [](size_t links) {
        std::vector<std::string> records;
        std::string from = "cdn.test.";
        for (size_t i = 1; i <= links; ++i) {
            std::string to = "n" + std::to_string(i) + ".cdn.test.";
            records.push_back(from + " 300 IN CNAME " + to);
            from = to;
        }
        records.push_back(from + " 300 IN A 198.18.9.1");
        return records;
    };
    auto longest = decide(builds(), q, chain(kMaxCnameLinks));
    EXPECT_EQ(longest.kind, Kind::relay) << longest.reason;
    EXPECT_EQ(longest.addresses.size(), 1u);
    auto too_long = decide(builds(), q, chain(kMaxCnameLinks + 1));
    EXPECT_EQ(too_long.kind, Kind::servfail);
    EXPECT_TRUE(too_long.addresses.empty());
}

TEST_F(EgressDnsAnswerPolicy, TwoDifferentCnamesForOneNameAreServfail) {
    Query q = query("cdn.test");
    auto d = decide(builds(), q, {"cdn.test. 300 IN CNAME a.cdn.test.", "cdn.test. 300 IN CNAME b.cdn.test."});
    EXPECT_EQ(d.kind, Kind::servfail);
}

TEST_F(EgressDnsAnswerPolicy, AnAnswerToAnotherIdOrQuestionIsNotUsed) {
    Query q = query("mirror.bench.test");
    auto wrong_id = decide_answer(*policy, builds(), q, response(q, 0x1000, {"mirror.bench.test. 60 IN A 198.18.9.1"}),
                                  0x2000);
    EXPECT_EQ(wrong_id.kind, Kind::servfail);
    EXPECT_TRUE(wrong_id.addresses.empty());
    Query other = query("cdn.test");
    auto wrong_question = decide_answer(*policy, builds(), q,
                                        response(other, 0x1000, {"cdn.test. 60 IN A 198.18.9.1"}), 0x1000);
    EXPECT_EQ(wrong_question.kind, Kind::servfail);
}

TEST_F(EgressDnsAnswerPolicy, AnUpstreamErrorIsRelayedAsIsAndTeachesNothing) {
    Query q = query("nothere.cdn.test", LDNS_RR_TYPE_A, 0x5151);
    auto d = decide(builds(), q, {}, LDNS_RCODE_NXDOMAIN);
    ASSERT_EQ(d.kind, Kind::relay);
    EXPECT_TRUE(d.addresses.empty());
    EXPECT_EQ(ldns_pkt_get_rcode(d.answer.get()), LDNS_RCODE_NXDOMAIN);
    EXPECT_EQ(ldns_pkt_id(d.answer.get()), 0x5151);
}

TEST_F(EgressDnsAnswerPolicy, TheDenyAnswerIsTheConfiguredRcode) {
    EXPECT_EQ(deny_rcode(*policy), LDNS_RCODE_NXDOMAIN);
    auto refused = policy_from(
        "  deny-answer: refused\n  upstreams: [127.0.0.1]\n  scopes: { s: { from: trust } }\n");
    EXPECT_EQ(deny_rcode(*refused), LDNS_RCODE_REFUSED);
}

}  // namespace
