// The egress proxy's DNS messages (userspace/egress/dns_message.h): which
// messages are queries it takes, and the replies it builds itself.
#include <gtest/gtest.h>

#include "egress_dns_fake_upstream.h"

using namespace sluice::egress;
using namespace egress_test;

namespace {

QueryRejection rejection(const Wire& wire) {
    auto parsed = parse_query(wire);
    EXPECT_TRUE(std::holds_alternative<QueryRejection>(parsed));
    return std::holds_alternative<QueryRejection>(parsed) ? std::get<QueryRejection>(parsed) : QueryRejection{};
}

TEST(EgressDnsMessage, AQueryIsParsedWithItsNameNormalized) {
    Packet p = make_query("Mirror.Bench.Test", LDNS_RR_TYPE_AAAA, 0xbeef);
    auto parsed = parse_query(wire_of(p.get()));
    ASSERT_TRUE(std::holds_alternative<Query>(parsed));
    const Query& q = std::get<Query>(parsed);
    EXPECT_EQ(q.id, 0xbeef);
    EXPECT_EQ(q.name, "Mirror.Bench.Test");
    EXPECT_EQ(q.normalized_name, "mirror.bench.test");
    EXPECT_EQ(q.qtype, LDNS_RR_TYPE_AAAA);
    EXPECT_EQ(q.qclass, LDNS_RR_CLASS_IN);
    EXPECT_TRUE(q.rd);
    EXPECT_EQ(q.max_udp_answer, 512u);
}

TEST(EgressDnsMessage, EdnsRaisesTheClientsUdpLimit) {
    Packet p = make_query("mirror.bench.test");
    ldns_pkt_set_edns_udp_size(p.get(), 1232);
    auto parsed = parse_query(wire_of(p.get()));
    ASSERT_TRUE(std::holds_alternative<Query>(parsed));
    EXPECT_EQ(std::get<Query>(parsed).max_udp_answer, 1232u);
}

TEST(EgressDnsMessage, MessagesThatAreNotQueriesAreRejected) {
    // Shorter than a header: nothing to answer to.
    EXPECT_FALSE(rejection(Wire{1, 2, 3}).answerable);
    // A response: never answered (two resolvers must not bounce errors).
    Packet response = make_query("mirror.bench.test");
    ldns_pkt_set_qr(response.get(), true);
    EXPECT_FALSE(rejection(wire_of(response.get())).answerable);
    // Two questions, no question, another opcode, a garbled question: FORMERR.
    Packet two = make_query("a.bench.test");
    ldns_pkt_push_rr(two.get(), LDNS_SECTION_QUESTION, ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(two.get()), 0)));
    EXPECT_TRUE(rejection(wire_of(two.get())).answerable);
    Packet none(ldns_pkt_new());
    EXPECT_TRUE(rejection(wire_of(none.get())).answerable);
    Packet notify = make_query("a.bench.test");
    ldns_pkt_set_opcode(notify.get(), LDNS_PACKET_NOTIFY);
    EXPECT_TRUE(rejection(wire_of(notify.get())).answerable);
    Wire garbled = wire_of(make_query("a.bench.test").get());
    garbled.resize(LDNS_HEADER_SIZE + 3);
    auto r = rejection(garbled);
    EXPECT_TRUE(r.answerable);
    EXPECT_FALSE(r.reason.empty());
}

TEST(EgressDnsMessage, RepliesEchoTheQuestionAndId) {
    Packet p = make_query("mirror.bench.test", LDNS_RR_TYPE_A, 0x0102);
    auto parsed = parse_query(wire_of(p.get()));
    ASSERT_TRUE(std::holds_alternative<Query>(parsed));
    for (ldns_pkt_rcode rcode : {LDNS_RCODE_NXDOMAIN, LDNS_RCODE_REFUSED, LDNS_RCODE_SERVFAIL}) {
        auto wire = build_reply(std::get<Query>(parsed), rcode);
        ASSERT_TRUE(wire.ok());
        Packet reply = parse(wire.value());
        EXPECT_EQ(ldns_pkt_id(reply.get()), 0x0102);
        EXPECT_TRUE(ldns_pkt_qr(reply.get()));
        EXPECT_TRUE(ldns_pkt_ra(reply.get()));
        EXPECT_TRUE(ldns_pkt_rd(reply.get()));
        EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), rcode) << rcode_name(rcode);
        EXPECT_TRUE(answers_question(reply.get(), 0x0102, std::get<Query>(parsed).question()));
        EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0);
    }
}

TEST(EgressDnsMessage, FormerrIsBuiltFromTheHeaderAlone) {
    Wire garbled = wire_of(make_query("a.bench.test", LDNS_RR_TYPE_A, 0x7a7a).get());
    garbled.resize(LDNS_HEADER_SIZE + 2);
    auto wire = build_formerr(garbled);
    ASSERT_TRUE(wire.ok());
    Packet reply = parse(wire.value());
    EXPECT_EQ(ldns_pkt_id(reply.get()), 0x7a7a);
    EXPECT_TRUE(ldns_pkt_qr(reply.get()));
    EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_FORMERR);
    EXPECT_FALSE(build_formerr(Wire{0, 1}).ok());
}

TEST(EgressDnsMessage, TheUpstreamQueryIsTheClientsWithAnotherId) {
    Packet p = make_query("mirror.bench.test", LDNS_RR_TYPE_AAAA, 0x0001);
    ldns_pkt_set_edns_udp_size(p.get(), 1400);
    auto parsed = parse_query(wire_of(p.get()));
    ASSERT_TRUE(std::holds_alternative<Query>(parsed));
    const Query& q = std::get<Query>(parsed);
    auto wire = build_upstream_query(q, 0x9999);
    ASSERT_TRUE(wire.ok());
    Packet up = parse(wire.value());
    EXPECT_EQ(ldns_pkt_id(up.get()), 0x9999);
    EXPECT_FALSE(ldns_pkt_qr(up.get()));
    EXPECT_EQ(ldns_pkt_edns_udp_size(up.get()), 1400);
    EXPECT_EQ(ldns_rr_get_type(ldns_rr_list_rr(ldns_pkt_question(up.get()), 0)), LDNS_RR_TYPE_AAAA);
    EXPECT_EQ(q.id, 0x0001);  // the client's own query is left alone
}

TEST(EgressDnsMessage, AnAnswerMatchesItsQuestionCaseInsensitively) {
    Packet q = make_query("Mirror.Bench.Test");
    Packet a = make_query("mirror.bench.test");
    ldns_pkt_set_qr(a.get(), true);
    const ldns_rr* question = ldns_rr_list_rr(ldns_pkt_question(q.get()), 0);
    EXPECT_TRUE(answers_question(a.get(), 0x1234, question));
    EXPECT_FALSE(answers_question(a.get(), 0x1235, question));
    Packet aaaa = make_query("mirror.bench.test", LDNS_RR_TYPE_AAAA);
    ldns_pkt_set_qr(aaaa.get(), true);
    EXPECT_FALSE(answers_question(aaaa.get(), 0x1234, question));
    ldns_pkt_set_qr(a.get(), false);
    EXPECT_FALSE(answers_question(a.get(), 0x1234, question));  // a query is no answer
}

TEST(EgressDnsMessage, TcpFramesAreSplitWhereverTheBytesBreak) {
    Wire one{1, 2, 3}, two(300, 7);
    auto a = frame_message(one), b = frame_message(two);
    Wire stream(a.begin(), a.end());
    stream.insert(stream.end(), b.begin(), b.end());
    FrameReader reader;
    std::vector<Wire> got;
    for (uint8_t byte : stream) {
        reader.append(&byte, 1);
        while (auto m = reader.next()) got.push_back(*m);
    }
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], one);
    EXPECT_EQ(got[1], two);
    EXPECT_EQ(reader.buffered(), 0u);
}

}  // namespace
