// The egress DNS proxy end to end on loopback (transparent off): real
// clients over UDP and TCP, fake upstreams written with ldns, a learn hook
// that records what it was given and when. What is asserted is what a user
// sees: the rcode, the addresses, what the datapath learned before the
// client got its answer, the counters. Time bounds are loose and about
// behaviour (a timeout's worth, not a stall of several seconds).
#include <gtest/gtest.h>

#include "egress/dns_proxy.h"
#include "egress/reply_sockets.h"
#include "egress_dns_fake_upstream.h"

using namespace sluice::egress;
using namespace egress_test;
using std::chrono::milliseconds;

namespace {

// Of *.bench.test only the mirror (and, in builds, its alias) passes, whether
// the exact allow comes before the wildcard deny (builds, scope 1) or after
// it (guests, scope 2): the more specific pattern decides.
std::string policy_yaml(const std::vector<std::string>& upstreams, const std::string& extra = "") {
    std::string list;
    for (const auto& a : upstreams) list += (list.empty() ? "\"" : ", \"") + a + "\"";
    return "  upstreams: [" + list + "]\n" + extra +
           "  learned-ttl: { minimum: 30s, maximum: 10m, grace: 10s }\n"
           "  scopes:\n"
           "    builds:\n"
           "      from: trust\n"
           "      rules:\n"
           "        - { action: allow, name: [mirror.bench.test, alias.bench.test] }\n"
           "        - { action: deny, name: \"*.bench.test\" }\n"
           "        - { action: allow, name: \"*.hosts.test\" }\n"
           "    guests:\n"
           "      from: untrust\n"
           "      rules:\n"
           "        - { action: deny, name: \"*.bench.test\" }\n"
           "        - { action: allow, name: mirror.bench.test }\n";
}

struct LearnCall {
    uint8_t scope = 0;
    std::vector<LearnedAddress> addresses;
    int sequence = 0;  // when the hook returned
};

std::string text(const LearnedAddress& a) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(a.family, a.address.data(), buf, sizeof(buf));
    return buf;
}

class EgressDnsProxy : public ::testing::Test {
protected:
    void SetUp() override {
        upstream.add("mirror.bench.test. 5 IN A 198.18.9.1");
        upstream.add("mirror.bench.test. 86400 IN A 198.18.9.2");
        upstream.add("mirror.bench.test. 300 IN AAAA 2001:2:0:9::1");
        upstream.add("other.bench.test. 300 IN A 198.18.9.66");
        upstream.add("alias.bench.test. 300 IN CNAME cache.bench.test.");
        upstream.add("cache.bench.test. 300 IN A 198.18.9.77");
        for (int i = 0; i < 100; ++i)
            upstream.add("host" + std::to_string(i) + ".hosts.test. 300 IN A 198.18.10." + std::to_string(i));
    }
    void TearDown() override {
        if (proxy) proxy->stop();
    }

    void start(const std::string& yaml, milliseconds timeout = milliseconds(300)) {
        DnsProxyOptions options;
        options.transparent = false;
        options.upstream_timeout = timeout;
        DnsProxyHooks hooks;
        hooks.scope_of = [this](const ClientFlow& flow) {
            std::lock_guard lock(mutex);
            flows.push_back(flow);
            return scope.load();
        };
        hooks.learn = [this](uint8_t scope_id, const std::vector<LearnedAddress>& addresses) -> sluice::Status {
            // A slow map write: were the answer released before it, the
            // client would get it before the hook's sequence number is taken.
            std::this_thread::sleep_for(milliseconds(learn_delay_ms.load()));
            std::lock_guard lock(mutex);
            learned.push_back({scope_id, addresses, ++sequence});
            if (learn_fails) return sluice::make_error("the learned-address map is full");
            return {};
        };
        auto started = DnsProxy::start(policy_from(yaml), options, std::move(hooks));
        ASSERT_TRUE(started.ok()) << started.error().message;
        proxy = std::move(started.value());
        ASSERT_NE(proxy->port(), 0);
    }

    struct Answer {
        Packet packet;
        int sequence = 0;  // when the client got it
        ldns_pkt_rcode rcode() const { return packet ? ldns_pkt_get_rcode(packet.get()) : static_cast<ldns_pkt_rcode>(-1); }
    };

    Answer over_udp(const std::string& name, ldns_rr_type type = LDNS_RR_TYPE_A, int family = AF_INET,
                    uint16_t id = 0x2468) {
        Wire reply = ask_udp(proxy->port(), wire_of(make_query(name, type, id).get()), milliseconds(5000), family);
        return received(reply, id);
    }
    Answer over_tcp(const std::string& name, ldns_rr_type type = LDNS_RR_TYPE_A, uint16_t id = 0x1357) {
        Wire reply = ask_tcp(proxy->port(), wire_of(make_query(name, type, id).get()));
        return received(reply, id);
    }
    Answer received(const Wire& reply, uint16_t id) {
        Answer a;
        {
            std::lock_guard lock(mutex);
            a.sequence = ++sequence;
        }
        EXPECT_FALSE(reply.empty()) << "no answer";
        if (reply.empty()) return a;
        a.packet = parse(reply);
        EXPECT_EQ(ldns_pkt_id(a.packet.get()), id);
        EXPECT_TRUE(ldns_pkt_qr(a.packet.get()));
        return a;
    }
    std::vector<LearnCall> learn_calls() {
        std::lock_guard lock(mutex);
        return learned;
    }

    FakeUpstream upstream;
    std::unique_ptr<DnsProxy> proxy;
    std::atomic<uint8_t> scope{1};
    std::atomic<int> learn_delay_ms{0};
    std::atomic<bool> learn_fails{false};
    std::mutex mutex;
    std::vector<ClientFlow> flows;
    std::vector<LearnCall> learned;
    int sequence = 0;
};

std::vector<uint32_t> answer_ttls(const ldns_pkt* p) {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < ldns_rr_list_rr_count(ldns_pkt_answer(p)); ++i)
        out.push_back(ldns_rr_ttl(ldns_rr_list_rr(ldns_pkt_answer(p), i)));
    return out;
}

TEST_F(EgressDnsProxy, AnAllowedNameIsAnsweredAndLearnedBeforeTheClientGetsIt) {
    start(policy_yaml({upstream.address()}));
    learn_delay_ms = 50;
    Answer a = over_udp("mirror.bench.test");
    ASSERT_EQ(a.rcode(), LDNS_RCODE_NOERROR);
    EXPECT_EQ(answer_addresses(a.packet.get()), (std::vector<std::string>{"198.18.9.1", "198.18.9.2"}));
    // The client may cache for at most the learned maximum (10m); 5 s stays 5 s.
    EXPECT_EQ(answer_ttls(a.packet.get()), (std::vector<uint32_t>{5, 600}));

    auto calls = learn_calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].scope, 1);
    EXPECT_LT(calls[0].sequence, a.sequence) << "the answer was released before its addresses were learned";
    ASSERT_EQ(calls[0].addresses.size(), 2u);
    EXPECT_EQ(text(calls[0].addresses[0]), "198.18.9.1");
    EXPECT_EQ(calls[0].addresses[0].ttl, std::chrono::seconds(30));   // raised to the minimum
    EXPECT_EQ(text(calls[0].addresses[1]), "198.18.9.2");
    EXPECT_EQ(calls[0].addresses[1].ttl, std::chrono::seconds(600));  // cut to the maximum
    ASSERT_NE(calls[0].addresses[0].rule, nullptr);
    EXPECT_EQ(calls[0].addresses[0].rule->path, "egress.scopes.builds.rules[0]");

    auto c = proxy->counters();
    EXPECT_EQ(c.queries, 1u);
    EXPECT_EQ(c.allowed, 1u);
    EXPECT_EQ(c.learned, 2u);
    EXPECT_EQ(c.denied, 0u);
}

TEST_F(EgressDnsProxy, AnIpv6ClientGetsAndTeachesAaaaRecords) {
    start(policy_yaml({upstream.address()}));
    Answer a = over_udp("mirror.bench.test", LDNS_RR_TYPE_AAAA, AF_INET6);
    ASSERT_EQ(a.rcode(), LDNS_RCODE_NOERROR);
    EXPECT_EQ(answer_addresses(a.packet.get()), std::vector<std::string>{"2001:2:0:9::1"});
    auto calls = learn_calls();
    ASSERT_EQ(calls.size(), 1u);
    ASSERT_EQ(calls[0].addresses.size(), 1u);
    EXPECT_EQ(calls[0].addresses[0].family, AF_INET6);
    EXPECT_EQ(text(calls[0].addresses[0]), "2001:2:0:9::1");
    std::lock_guard lock(mutex);
    ASSERT_FALSE(flows.empty());
    EXPECT_EQ(flows.back().family, AF_INET6);
    EXPECT_EQ(flows.back().protocol, IPPROTO_UDP);
    EXPECT_EQ(flows.back().resolver_port, proxy->port());
}

TEST_F(EgressDnsProxy, ADeniedNameIsNxdomainAndNeverAskedUpstream) {
    start(policy_yaml({upstream.address()}));
    Answer a = over_udp("other.bench.test");
    EXPECT_EQ(a.rcode(), LDNS_RCODE_NXDOMAIN);
    EXPECT_EQ(ldns_pkt_ancount(a.packet.get()), 0);
    Answer unlisted = over_udp("unlisted.test");  // the scope's default: deny
    EXPECT_EQ(unlisted.rcode(), LDNS_RCODE_NXDOMAIN);
    EXPECT_EQ(upstream.queries(), 0);
    EXPECT_TRUE(learn_calls().empty());
    EXPECT_EQ(proxy->counters().denied, 2u);
}

TEST_F(EgressDnsProxy, TheDenyAnswerCanBeRefused) {
    start(policy_yaml({upstream.address()}, "  deny-answer: refused\n"));
    EXPECT_EQ(over_udp("other.bench.test").rcode(), LDNS_RCODE_REFUSED);
    EXPECT_EQ(upstream.queries(), 0);
}

TEST_F(EgressDnsProxy, AWildcardDenyWithAnExactAllowAdmitsOnlyThatHostInEitherOrder) {
    start(policy_yaml({upstream.address()}));
    for (uint8_t s : {1, 2}) {  // builds: the allow first; guests: the deny first
        scope = s;
        EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_NOERROR) << "scope " << int(s);
        EXPECT_EQ(over_udp("other.bench.test").rcode(), LDNS_RCODE_NXDOMAIN) << "scope " << int(s);
    }
    EXPECT_EQ(upstream.queries(), 2);  // the mirror, once per scope
    auto calls = learn_calls();
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[0].scope, 1);
    EXPECT_EQ(calls[1].scope, 2);
}

TEST_F(EgressDnsProxy, AnAliasToADeniedNameIsDeniedAndTeachesNothing) {
    start(policy_yaml({upstream.address()}));
    Answer a = over_udp("alias.bench.test");  // allowed, but its CNAME leads to cache.bench.test
    EXPECT_EQ(a.rcode(), LDNS_RCODE_NXDOMAIN);
    EXPECT_EQ(ldns_pkt_ancount(a.packet.get()), 0);
    EXPECT_EQ(upstream.queries(), 1);
    EXPECT_TRUE(learn_calls().empty());
    EXPECT_EQ(proxy->counters().denied, 1u);
}

TEST_F(EgressDnsProxy, AClientNoScopeGovernsIsRefused) {
    start(policy_yaml({upstream.address()}));
    scope = 0;
    EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_REFUSED);
    scope = 9;  // a scope the policy does not have (gone with a reload)
    EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_REFUSED);
    EXPECT_EQ(upstream.queries(), 0);
    EXPECT_EQ(proxy->counters().not_governed, 2u);
}

TEST_F(EgressDnsProxy, ADeadFirstUpstreamCostsOneTimeoutThenTheLiveOneIsAskedFirst) {
    Blackhole dead;
    start(policy_yaml({dead.address(), upstream.address()}), milliseconds(300));
    auto begin = Clock::now();
    EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_NOERROR);
    EXPECT_LT(Clock::now() - begin, milliseconds(3000));  // about one timeout, not a stall
    for (int i = 0; i < 3; ++i) EXPECT_EQ(over_udp("host" + std::to_string(i) + ".hosts.test").rcode(), LDNS_RCODE_NOERROR);
    EXPECT_EQ(dead.received(), 1);
    EXPECT_EQ(upstream.queries(), 4);
    EXPECT_EQ(proxy->counters().upstream_errors, 1u);
}

TEST_F(EgressDnsProxy, NoUpstreamAnsweringIsServfailWithinUpstreamsTimesTimeout) {
    Blackhole dead;
    start(policy_yaml({dead.address(), closed_address()}), milliseconds(300));
    auto begin = Clock::now();
    Answer a = over_udp("mirror.bench.test");
    EXPECT_EQ(a.rcode(), LDNS_RCODE_SERVFAIL);
    EXPECT_LT(Clock::now() - begin, milliseconds(2 * 300 + 2000));
    auto c = proxy->counters();
    EXPECT_EQ(c.servfail, 1u);
    EXPECT_EQ(c.upstream_errors, 2u);
    EXPECT_TRUE(learn_calls().empty());
}

TEST_F(EgressDnsProxy, ALearnFailureIsServfail) {
    start(policy_yaml({upstream.address()}));
    learn_fails = true;
    EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_SERVFAIL);
    auto c = proxy->counters();
    EXPECT_EQ(c.learn_failures, 1u);
    EXPECT_EQ(c.servfail, 1u);
    EXPECT_EQ(c.learned, 0u);
    EXPECT_EQ(c.allowed, 0u);
}

TEST_F(EgressDnsProxy, AMalformedQueryIsFormerrAndAShortOneIsDropped) {
    start(policy_yaml({upstream.address()}));
    Wire garbled = wire_of(make_query("mirror.bench.test", LDNS_RR_TYPE_A, 0x0bad).get());
    garbled.resize(LDNS_HEADER_SIZE + 4);
    Answer a = received(ask_udp(proxy->port(), garbled), 0x0bad);
    EXPECT_EQ(a.rcode(), LDNS_RCODE_FORMERR);
    EXPECT_TRUE(ask_udp(proxy->port(), Wire{0, 1, 2, 3}, milliseconds(300)).empty());
    auto c = proxy->counters();
    EXPECT_EQ(c.malformed, 2u);
    EXPECT_EQ(c.queries, 0u);
    EXPECT_EQ(upstream.queries(), 0);
}

TEST_F(EgressDnsProxy, TcpQueriesAreAnsweredAndSeveralMayShareAConnection) {
    start(policy_yaml({upstream.address()}));
    learn_delay_ms = 20;
    Answer a = over_tcp("mirror.bench.test");
    ASSERT_EQ(a.rcode(), LDNS_RCODE_NOERROR);
    EXPECT_EQ(answer_addresses(a.packet.get()), (std::vector<std::string>{"198.18.9.1", "198.18.9.2"}));
    auto calls = learn_calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_LT(calls[0].sequence, a.sequence);
    EXPECT_EQ(upstream.tcp_queries(), 1);  // asked over TCP, as the client did

    // Two queries in one write on one connection: two answers, by id.
    int fd = connect_tcp(proxy->port());
    Wire both = frame_message(wire_of(make_query("host1.hosts.test", LDNS_RR_TYPE_A, 1).get()));
    Wire second = frame_message(wire_of(make_query("other.bench.test", LDNS_RR_TYPE_A, 2).get()));
    both.insert(both.end(), second.begin(), second.end());
    send(fd, both.data(), both.size(), MSG_NOSIGNAL);
    std::map<uint16_t, ldns_pkt_rcode> rcodes;
    FrameReader reader;
    for (int i = 0; i < 2; ++i) {
        Wire reply = read_tcp_message(fd, reader);
        ASSERT_FALSE(reply.empty());
        Packet p = parse(reply);
        rcodes[ldns_pkt_id(p.get())] = ldns_pkt_get_rcode(p.get());
    }
    close(fd);
    EXPECT_EQ(rcodes[1], LDNS_RCODE_NOERROR);
    EXPECT_EQ(rcodes[2], LDNS_RCODE_NXDOMAIN);
    auto c = proxy->counters();
    EXPECT_EQ(c.tcp_queries, 3u);
    std::lock_guard lock(mutex);
    EXPECT_EQ(flows.back().protocol, IPPROTO_TCP);
}

TEST_F(EgressDnsProxy, AHundredQueriesPipelinedOnOneHalfClosedConnectionAreAllAnswered) {
    start(policy_yaml({upstream.address()}), milliseconds(5000));
    constexpr int kQueries = 100;  // more than the proxy takes in flight per connection
    int fd = connect_tcp(proxy->port());
    Wire all;
    for (int i = 0; i < kQueries; ++i) {
        Wire framed = frame_message(wire_of(make_query("host" + std::to_string(i) + ".hosts.test", LDNS_RR_TYPE_A,
                                                       static_cast<uint16_t>(i)).get()));
        all.insert(all.end(), framed.begin(), framed.end());
    }
    ASSERT_EQ(send(fd, all.data(), all.size(), MSG_NOSIGNAL), static_cast<ssize_t>(all.size()));
    shutdown(fd, SHUT_WR);  // nothing more to ask; the answers must still come
    std::set<int> answered;
    FrameReader reader;
    for (int i = 0; i < kQueries; ++i) {
        Wire reply = read_tcp_message(fd, reader, std::chrono::seconds(10));
        if (reply.empty()) break;
        Packet p = parse(reply);
        const int id = ldns_pkt_id(p.get());
        EXPECT_EQ(answer_addresses(p.get()), std::vector<std::string>{"198.18.10." + std::to_string(id)});
        answered.insert(id);
    }
    EXPECT_EQ(answered.size(), static_cast<size_t>(kQueries));
    // Every answer given, the proxy closes the connection.
    uint8_t byte;
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 5000), 1);
    EXPECT_EQ(recv(fd, &byte, 1, 0), 0);
    close(fd);
}

TEST_F(EgressDnsProxy, AnAnswerTooLargeForUdpIsTruncatedAndWholeOverTcp) {
    for (int i = 0; i < 40; ++i) upstream.add("big.hosts.test. 300 IN A 198.18.11." + std::to_string(i));
    start(policy_yaml({upstream.address()}));
    Answer udp = over_udp("big.hosts.test");  // no EDNS: 512 bytes at most
    ASSERT_EQ(udp.rcode(), LDNS_RCODE_NOERROR);
    EXPECT_TRUE(ldns_pkt_tc(udp.packet.get()));
    EXPECT_EQ(ldns_pkt_ancount(udp.packet.get()), 0);
    Answer tcp = over_tcp("big.hosts.test");
    ASSERT_EQ(tcp.rcode(), LDNS_RCODE_NOERROR);
    EXPECT_FALSE(ldns_pkt_tc(tcp.packet.get()));
    EXPECT_EQ(answer_addresses(tcp.packet.get()).size(), 40u);
}

TEST_F(EgressDnsProxy, ANewPolicyDecidesTheNextQuery) {
    start(policy_yaml({upstream.address()}));
    EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_NOERROR);
    proxy->set_policy(policy_from("  upstreams: [\"" + upstream.address() +
                                  "\"]\n  scopes: { builds: { from: trust, default: deny } }\n"));
    EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_NXDOMAIN);
    EXPECT_EQ(upstream.queries(), 1);
}

TEST_F(EgressDnsProxy, AHundredConcurrentQueriesAreAllAnswered) {
    start(policy_yaml({upstream.address()}), milliseconds(2000));
    constexpr int kClients = 100;
    std::vector<int> fds;
    socklen_t len = 0;
    sockaddr_storage to = loopback(AF_INET, proxy->port(), len);
    for (int i = 0; i < kClients; ++i) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        connect(fd, reinterpret_cast<sockaddr*>(&to), len);
        Wire q = wire_of(make_query("host" + std::to_string(i) + ".hosts.test", LDNS_RR_TYPE_A,
                                    static_cast<uint16_t>(i)).get());
        send(fd, q.data(), q.size(), 0);
        fds.push_back(fd);
    }
    int answered = 0;
    const auto until = Clock::now() + std::chrono::seconds(10);
    std::vector<bool> done(kClients, false);
    while (answered < kClients && Clock::now() < until) {
        std::vector<pollfd> pfds;
        for (int i = 0; i < kClients; ++i)
            if (!done[i]) pfds.push_back({fds[i], POLLIN, 0});
        if (poll(pfds.data(), pfds.size(), 200) <= 0) continue;
        for (int i = 0; i < kClients; ++i) {
            if (done[i]) continue;
            Wire buf(4096);
            ssize_t n = recv(fds[i], buf.data(), buf.size(), MSG_DONTWAIT);
            if (n <= 0) continue;
            buf.resize(static_cast<size_t>(n));
            Packet p = parse(buf);
            EXPECT_EQ(ldns_pkt_id(p.get()), i);
            EXPECT_EQ(answer_addresses(p.get()), std::vector<std::string>{"198.18.10." + std::to_string(i)});
            done[i] = true;
            ++answered;
        }
    }
    for (int fd : fds) close(fd);
    EXPECT_EQ(answered, kClients);
    EXPECT_EQ(proxy->counters().learned, static_cast<uint64_t>(kClients));
}

TEST_F(EgressDnsProxy, ASlowAnswerDoesNotHoldTheOthers) {
    upstream.add("slow.hosts.test. 300 IN A 198.18.12.1");
    upstream.delay("slow.hosts.test", milliseconds(1500));
    start(policy_yaml({upstream.address()}), milliseconds(5000));
    int slow = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    sockaddr_storage to = loopback(AF_INET, proxy->port(), len);
    connect(slow, reinterpret_cast<sockaddr*>(&to), len);
    Wire q = wire_of(make_query("slow.hosts.test").get());
    send(slow, q.data(), q.size(), 0);
    // While the slow one waits upstream, another query is answered.
    EXPECT_EQ(over_udp("host5.hosts.test").rcode(), LDNS_RCODE_NOERROR);
    pollfd p{slow, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 0) << "the slow answer came first: the fast query waited for it";
    EXPECT_EQ(poll(&p, 1, 10000), 1);
    close(slow);
}

TEST_F(EgressDnsProxy, StopClosesTheListeners) {
    start(policy_yaml({upstream.address()}));
    const uint16_t port = proxy->port();
    proxy->stop();
    EXPECT_TRUE(ask_udp(port, wire_of(make_query("mirror.bench.test").get()), milliseconds(300)).empty());
    proxy->stop();  // again: nothing happens
}

TEST_F(EgressDnsProxy, StartFailsWhenThePortIsTaken) {
    int taken = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    sockaddr_storage any = loopback(AF_INET, 0, len);
    ASSERT_EQ(bind(taken, reinterpret_cast<sockaddr*>(&any), len), 0);
    DnsProxyOptions options;
    options.transparent = false;
    options.port = port_of(taken);
    auto started = DnsProxy::start(policy_from(policy_yaml({upstream.address()})), options, {});
    close(taken);
    ASSERT_FALSE(started.ok());
    EXPECT_NE(started.error().message.find("127.0.0.1:" + std::to_string(options.port)), std::string::npos)
        << started.error().message;
}

// Transparent listeners need CAP_NET_ADMIN: skipped without it. A query
// sent straight to the listener has the listener's own address as its
// original destination, and is answered from the listener.
TEST_F(EgressDnsProxy, TransparentListenersAnswerAQuerySentToThemDirectly) {
    DnsProxyOptions options;
    options.transparent = true;
    DnsProxyHooks hooks;
    hooks.scope_of = [](const ClientFlow&) -> uint8_t { return 1; };
    hooks.learn = [](uint8_t, const std::vector<LearnedAddress>&) -> sluice::Status { return {}; };
    auto started = DnsProxy::start(policy_from(policy_yaml({upstream.address()})), options, std::move(hooks));
    if (!started.ok() && started.error().code == sluice::ErrorCode::PermissionDenied)
        GTEST_SKIP() << started.error().message;
    ASSERT_TRUE(started.ok()) << started.error().message;
    proxy = std::move(started.value());
    EXPECT_EQ(over_udp("mirror.bench.test").rcode(), LDNS_RCODE_NOERROR);
    EXPECT_EQ(over_udp("mirror.bench.test", LDNS_RR_TYPE_AAAA, AF_INET6).rcode(), LDNS_RCODE_NOERROR);
    EXPECT_EQ(over_tcp("other.bench.test").rcode(), LDNS_RCODE_NXDOMAIN);
}

// The client asked its resolver; the answer must come from that resolver's
// address and port, which is not the proxy's.
TEST(EgressDnsReplySockets, AnswersComeFromTheOriginalDestination) {
    int client = bound_socket(AF_INET, SOCK_DGRAM);
    sluice::inspect::Endpoint resolver, to;
    resolver.family = to.family = AF_INET;
    inet_pton(AF_INET, "198.18.53.1", &resolver.addr[0]);
    resolver.port = htons(53);
    to.addr[0] = htonl(INADDR_LOOPBACK);
    to.port = htons(port_of(client));
    ReplySockets sockets;
    const Wire message{1, 2, 3};
    auto sent = sockets.send(resolver, to, message);
    if (!sent.ok() && sent.error().code == sluice::ErrorCode::PermissionDenied) {
        close(client);
        GTEST_SKIP() << sent.error().message;
    }
    ASSERT_TRUE(sent.ok()) << sent.error().message;
    ASSERT_TRUE(sockets.send(resolver, to, message).ok());
    EXPECT_EQ(sockets.size(), 1u);  // one socket per resolver address, kept
    for (int i = 0; i < 2; ++i) {
        pollfd p{client, POLLIN, 0};
        ASSERT_EQ(poll(&p, 1, 5000), 1);
        sockaddr_storage from{};
        socklen_t len = sizeof(from);
        Wire buf(16);
        ASSERT_EQ(recvfrom(client, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len), 3);
        EXPECT_EQ(sluice::inspect::Endpoint::from(from).text(), "198.18.53.1:53");
    }
    close(client);
}

}  // namespace
