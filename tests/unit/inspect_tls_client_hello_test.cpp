// The inspection stage's ClientHello reader (egress verify-sni): the SNI of
// real ClientHellos OpenSSL's client writes, whole or a byte at a time; not
// TLS; and the SNI gate's decision with a scope's rules.
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <string>
#include <vector>

#include "config/load_config.h"
#include "inspect/ruleset_db.h"
#include "inspect/tls_client_hello.h"

using sluice::inspect::ClientHelloReader;

namespace {

// The first flight of a TLS client asking for `sni` ("" = no SNI).
std::vector<uint8_t> client_hello(const std::string& sni) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL* ssl = SSL_new(ctx);
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl, in, out);
    SSL_set_connect_state(ssl);
    if (!sni.empty()) SSL_set_tlsext_host_name(ssl, sni.c_str());
    (void)SSL_do_handshake(ssl);  // wants the server's answer; the hello is written
    std::vector<uint8_t> bytes(static_cast<size_t>(BIO_ctrl_pending(out)));
    BIO_read(out, bytes.data(), static_cast<int>(bytes.size()));
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    return bytes;
}

}  // namespace

TEST(InspectClientHello, ReadsTheSniOfAWholeClientHello) {
    auto hello = client_hello("mirror.bench.test");
    ASSERT_GT(hello.size(), 100u);
    ClientHelloReader reader;
    EXPECT_EQ(reader.feed(hello), ClientHelloReader::State::done);
    EXPECT_EQ(reader.sni(), "mirror.bench.test");
}

TEST(InspectClientHello, ReadsItAByteAtATime) {
    auto hello = client_hello("host042.bench.test");
    ClientHelloReader reader;
    for (size_t i = 0; i + 1 < hello.size(); ++i)
        ASSERT_EQ(reader.feed(std::span(&hello[i], 1)), ClientHelloReader::State::need_more) << "at byte " << i;
    EXPECT_EQ(reader.feed(std::span(&hello.back(), 1)), ClientHelloReader::State::done);
    EXPECT_EQ(reader.sni(), "host042.bench.test");
}

TEST(InspectClientHello, NoSniIsDoneWithAnEmptyName) {
    ClientHelloReader reader;
    EXPECT_EQ(reader.feed(client_hello("")), ClientHelloReader::State::done);
    EXPECT_EQ(reader.sni(), "");
}

TEST(InspectClientHello, OtherBytesAreNotTls) {
    const std::string http = "GET / HTTP/1.1\r\nHost: mirror.bench.test\r\n\r\n";
    ClientHelloReader reader;
    EXPECT_EQ(reader.feed(std::span(reinterpret_cast<const uint8_t*>(http.data()), http.size())),
              ClientHelloReader::State::not_tls);
    // A record header that promises more than the reader waits for.
    ClientHelloReader big;
    std::vector<uint8_t> never(ClientHelloReader::kMaxBytes + 1, 0x16);
    EXPECT_EQ(big.feed(never), ClientHelloReader::State::not_tls);
}

TEST(InspectClientHello, TheGateDecidesWithTheScopesRules) {
    auto loaded = sluice::config::parse_config(R"yaml(
interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }
zones: { trust: {}, untrust: {} }
egress:
  upstreams: 198.18.53.1
  doh-blocklist: ["doh.open.test"]
  scopes:
    s:
      from: trust
      verify-sni: true
      rules:
        - { action: deny, name: "*.bench.test" }
        - { action: allow, name: mirror.bench.test }
        - { action: allow, name: "*.open.test" }
)yaml",
                                               "t.yaml");
    ASSERT_TRUE(loaded.config.has_value());
    auto cell = std::make_shared<sluice::inspect::EgressPolicyCell>();
    cell->policy.store(std::make_shared<const sluice::config::Egress>(loaded.config->egress));
    sluice::inspect::SniGate gate{cell, 1};
    EXPECT_TRUE(gate.allows("mirror.bench.test"));
    EXPECT_TRUE(gate.allows("MIRROR.bench.test."));
    EXPECT_FALSE(gate.allows("other.bench.test"));
    EXPECT_TRUE(gate.allows("a.open.test"));
    EXPECT_FALSE(gate.allows("doh.open.test"));  // the blocklist first
    EXPECT_FALSE(gate.allows(""));
    EXPECT_FALSE(gate.allows("bad name"));
    sluice::inspect::SniGate unknown{cell, 7};
    EXPECT_FALSE(unknown.allows("mirror.bench.test"));
    // A rule changed at run time: the same gate decides with the new policy.
    auto changed = loaded.config->egress;
    changed.scopes[0].rules[0].action = sluice::config::EgressAction::allow;  // *.bench.test now allowed
    cell->policy.store(std::make_shared<const sluice::config::Egress>(changed));
    EXPECT_TRUE(gate.allows("other.bench.test"));
}
