// compile_egress (docs/egress.md): which (zone, source) each scope governs,
// and the address rules' trie entries, whose longest match must still decide
// by the rules' order.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "compiler/compile_egress.h"
#include "config/load_config.h"

using namespace sluice;

namespace {

const std::string kBase =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }\n"
    "zones: { trust: {}, untrust: {} }\n"
    "address-book: { builders: [198.18.1.0/28, \"2001:2:0:1::/120\"] }\n";

config::Config parsed(const std::string& text) {
    auto r = config::parse_config(text, "t.yaml");
    EXPECT_TRUE(r.diagnostics.empty()) << (r.diagnostics.empty() ? "" : config::format_diagnostic(r.diagnostics[0]));
    return r.config.value_or(config::Config{});
}

uint32_t v4(const char* text) {
    in_addr a{};
    inet_pton(AF_INET, text, &a);
    return a.s_addr;
}

const egress_prefix_rules* entry_v4(const CompiledEgress& e, uint8_t scope, const char* addr, uint32_t len) {
    for (const auto& [k, v] : e.prefixes_v4)
        if (k.zone == htonl(scope) && k.addr == v4(addr) && k.prefixlen == 32 + len) return &v;
    return nullptr;
}

}  // namespace

TEST(CompileEgress, NoSectionNoTables) {
    auto e = compiler::compile_egress(parsed(kBase));
    ASSERT_TRUE(e.ok());
    EXPECT_FALSE(e->enabled);
    EXPECT_TRUE(e->sources_v4.empty());
}

TEST(CompileEgress, ScopesGovernTheirZonesSources) {
    auto e = compiler::compile_egress(parsed(kBase + R"yaml(
egress:
  upstreams: 198.18.53.1
  scopes:
    builds: { from: trust, source: builders }
    guests: { from: untrust, default: allow }
)yaml"));
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_TRUE(e->enabled);
    // builds: its address-book prefixes in zone 1; guests: all of zone 2.
    ASSERT_EQ(e->sources_v4.size(), 2u);
    EXPECT_EQ(e->sources_v4[0].first.zone, htonl(1));
    EXPECT_EQ(e->sources_v4[0].first.prefixlen, 32u + 28);
    EXPECT_EQ(e->sources_v4[0].first.addr, v4("198.18.1.0"));
    EXPECT_EQ(e->sources_v4[0].second.scope_id, 1);
    EXPECT_EQ(e->sources_v4[0].second.default_allow, 0);
    EXPECT_EQ(e->sources_v4[1].first.zone, htonl(2));
    EXPECT_EQ(e->sources_v4[1].first.prefixlen, 32u);
    EXPECT_EQ(e->sources_v4[1].second.scope_id, 2);
    EXPECT_EQ(e->sources_v4[1].second.default_allow, 1);
    ASSERT_EQ(e->sources_v6.size(), 2u);
    EXPECT_EQ(e->sources_v6[0].first.prefixlen, 32u + 120);
    EXPECT_EQ(e->sources_v6[1].first.prefixlen, 32u);
}

TEST(CompileEgress, NestedAddressRulesKeepTheirOrder) {
    auto e = compiler::compile_egress(parsed(kBase + R"yaml(
egress:
  upstreams: 198.18.53.1
  scopes:
    s:
      from: trust
      rules:
        - { action: deny, address: 198.18.9.0/24, destination-port: 22 }
        - { action: allow, address: 198.18.9.128/25 }
        - { action: deny, address: 198.18.9.0/24 }
        - { action: allow, address: 198.18.9.200/32 }
)yaml"));
    ASSERT_TRUE(e.ok()) << e.error().message;
    // The /24: port 22 denied, then everything denied.
    const auto* wide = entry_v4(*e, 1, "198.18.9.0", 24);
    ASSERT_NE(wide, nullptr);
    ASSERT_EQ(wide->count, 2);
    EXPECT_EQ(wide->rules[0].allow, 0);
    EXPECT_EQ(wide->rules[0].ports.first, 22);
    EXPECT_EQ(wide->rules[0].ports.last, 22);
    EXPECT_EQ(wide->rules[1].allow, 0);
    EXPECT_EQ(wide->rules[1].ports.last, 0xffff);
    // The /25 inside it: port 22 still denied (the earlier rule), then allowed.
    const auto* half = entry_v4(*e, 1, "198.18.9.128", 25);
    ASSERT_NE(half, nullptr);
    ASSERT_EQ(half->count, 2);
    EXPECT_EQ(half->rules[0].allow, 0);
    EXPECT_EQ(half->rules[1].allow, 1);
    // The /32 inside both: shadowed by the /25's allow, which comes first.
    const auto* host = entry_v4(*e, 1, "198.18.9.200", 32);
    ASSERT_NE(host, nullptr);
    ASSERT_EQ(host->count, 2);
    EXPECT_EQ(host->rules[1].allow, 1);
}

TEST(CompileEgress, MistakesNameTheirPlace) {
    auto overlap = compiler::compile_egress(parsed(kBase + R"yaml(
egress:
  upstreams: 198.18.53.1
  scopes:
    a: { from: trust }
    b: { from: trust }
)yaml"));
    ASSERT_FALSE(overlap.ok());
    EXPECT_NE(overlap.error().message.find("already governed by scope \"a\""), std::string::npos)
        << overlap.error().message;
    ASSERT_TRUE(overlap.error().where.has_value());
    EXPECT_EQ(overlap.error().where->path, "egress.scopes.b.source");

    auto ports = compiler::compile_egress(parsed(kBase + R"yaml(
egress:
  upstreams: 198.18.53.1
  scopes:
    s:
      from: trust
      rules:
        - { action: allow, name: a.test, destination-port: [1, 2, 3, 4, 5] }
)yaml"));
    ASSERT_FALSE(ports.ok());
    EXPECT_NE(ports.error().message.find("at most 4 port ranges"), std::string::npos) << ports.error().message;

    auto many = compiler::compile_egress(parsed(kBase + R"yaml(
egress:
  upstreams: 198.18.53.1
  scopes:
    s:
      from: trust
      rules:
        - { action: deny, address: 198.18.9.0/24, destination-port: [1, 2, 3] }
        - { action: deny, address: 198.18.9.0/25, destination-port: [4, 5] }
)yaml"));
    ASSERT_FALSE(many.ok());
    EXPECT_NE(many.error().message.find("port ranges of address rules apply to 198.18.9.0/25"), std::string::npos)
        << many.error().message;
    EXPECT_EQ(many.error().where->path, "egress.scopes.s.rules[1]");
}

TEST(CompileEgress, OneRuleAsTheCliGivesIt) {
    auto r = config::parse_egress_rule("{ action: allow, name: [A.Test, \"*.b.test\"], destination-port: [443, 8000-8080] }",
                                       "egress.scopes.s.rules[3]");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(config::rule_text(r.value()),
              "{ action: allow, name: [\"a.test\", \"*.b.test\"], destination-port: [443, 8000-8080] }");
    auto again = config::parse_egress_rule(config::rule_text(r.value()), "x");
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_TRUE(config::same_rule(r.value(), again.value()));
    auto bad = config::parse_egress_rule("{ action: allow, name: \"*\" }", "egress.scopes.s.rules[3]");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("egress.scopes.s.rules[3].name"), std::string::npos) << bad.error().message;
    EXPECT_FALSE(config::parse_egress_rule("{ action: allow", "x").ok());
    EXPECT_FALSE(config::parse_egress_rule("{ action: maybe, name: a.test }", "x").ok());
}
