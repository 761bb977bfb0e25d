// The egress: section (docs/egress.md): names and patterns, the model a good
// file parses into, most-specific-match decisions, and every kind of mistake reported
// at its position; and that a good file compiles.
#include <gtest/gtest.h>

#include "compiler/compile.h"
#include "config/domain_name.h"
#include "config/load_config.h"

using namespace sluice::config;

namespace {

const std::string kBase =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }\n"
    "zones: { trust: {}, untrust: {} }\n"
    "address-book: { builders: 198.18.1.0/28 }\n";

const std::string kGood = kBase + R"yaml(
egress:
  upstreams: [198.18.53.1, "[2001:2:0:53::1]:5353", "198.18.53.2:5300"]
  deny-answer: refused
  learned-ttl: { minimum: 30s, maximum: 10m, grace: 0s }
  doh-blocklist: ["*.doh.bench.test"]
  scopes:
    builds:
      from: trust
      source: builders
      verify-sni: true
      rules:
        - { action: deny, name: "*.bench.test" }
        - { action: allow, name: [Mirror.Bench.Test., host001.bench.test], destination-port: [443, 8000-8080] }
        - { action: allow, address: [198.18.9.0/24, "2001:2:0:9::/64"] }
    guests:
      from: untrust
      default: allow
)yaml";

std::vector<std::string> errors_of(const std::string& text) {
    auto result = parse_config(text, "t.yaml");
    std::vector<std::string> out;
    for (const auto& d : result.diagnostics) out.push_back(format_diagnostic(d));
    return out;
}

Config parsed(const std::string& text) {
    auto result = parse_config(text, "t.yaml");
    for (const auto& d : result.diagnostics) ADD_FAILURE() << format_diagnostic(d);
    return result.ok() ? *result.config : Config{};
}

// The one error of `egress` + text under a scope, or "" when there is none or several.
std::string one_error(const std::string& egress_yaml) {
    auto errors = errors_of(kBase + egress_yaml);
    if (errors.size() != 1) {
        std::string all;
        for (const auto& e : errors) all += e + "\n";
        ADD_FAILURE() << errors.size() << " errors:\n" << all;
        return "";
    }
    return errors[0];
}

}  // namespace

TEST(DomainName, NormalizesCaseAndTheRootDot) {
    EXPECT_EQ(normalize_domain_name("Mirror.Bench.TEST.").value(), "mirror.bench.test");
    EXPECT_EQ(normalize_domain_name("_dns.resolver.test").value(), "_dns.resolver.test");
}

TEST(DomainName, RefusesWhatIsNotAName) {
    EXPECT_NE(normalize_domain_name("").error().message.find("empty"), std::string::npos);
    EXPECT_NE(normalize_domain_name("a..test").error().message.find("empty label"), std::string::npos);
    EXPECT_NE(normalize_domain_name("a b.test").error().message.find("' '"), std::string::npos);
    EXPECT_NE(normalize_domain_name("-a.test").error().message.find("starts or ends with '-'"), std::string::npos);
    EXPECT_NE(normalize_domain_name(std::string(64, 'a') + ".test").error().message.find("longer than 63"),
              std::string::npos);
    std::string long_name;
    for (int i = 0; i < 50; ++i) long_name += "abcd.";
    long_name += "test";  // 254 characters
    EXPECT_NE(normalize_domain_name(long_name).error().message.find("at most 253"), std::string::npos);
}

TEST(DomainPattern, WildcardMatchesBelowTheSuffixButNotTheApex) {
    const DomainPattern wild = parse_domain_pattern("*.Bench.Test").value();
    EXPECT_TRUE(wild.wildcard);
    EXPECT_EQ(wild.to_string(), "*.bench.test");
    EXPECT_TRUE(wild.matches("a.bench.test"));
    EXPECT_TRUE(wild.matches("a.b.bench.test"));
    EXPECT_FALSE(wild.matches("bench.test"));
    EXPECT_FALSE(wild.matches("abench.test"));  // a label boundary, not a string suffix
    EXPECT_FALSE(wild.matches("bench.test.evil"));
    const DomainPattern exact = parse_domain_pattern("bench.test").value();
    EXPECT_TRUE(exact.matches("bench.test"));
    EXPECT_FALSE(exact.matches("a.bench.test"));
}

TEST(DomainPattern, StarOnlyAsTheWholeFirstLabel) {
    EXPECT_NE(parse_domain_pattern("*").error().message.find("default: allow"), std::string::npos);
    EXPECT_NE(parse_domain_pattern("a*.test").error().message.find("only as the whole first label"),
              std::string::npos);
    EXPECT_NE(parse_domain_pattern("*.*.test").error().message.find("only as the whole first label"),
              std::string::npos);
}

TEST(ConfigEgress, AGoodSectionParses) {
    const Config c = parsed(kGood);
    const Egress& e = c.egress;
    ASSERT_TRUE(e.enabled);
    ASSERT_EQ(e.upstreams.size(), 3u);
    EXPECT_EQ(e.upstreams[0].port, 53);
    EXPECT_EQ(e.upstreams[0].address.family, Family::ipv4);
    EXPECT_EQ(e.upstreams[1].address.family, Family::ipv6);
    EXPECT_EQ(e.upstreams[1].port, 5353);
    EXPECT_EQ(e.upstreams[2].port, 5300);
    EXPECT_EQ(e.deny_answer, EgressDenyAnswer::refused);
    EXPECT_EQ(e.learned_ttl.minimum.count(), 30);
    EXPECT_EQ(e.learned_ttl.maximum.count(), 600);
    EXPECT_EQ(e.learned_ttl.grace.count(), 0);
    ASSERT_EQ(e.doh_blocklist.size(), 1u);
    EXPECT_TRUE(e.doh_blocklist[0].wildcard);
    ASSERT_EQ(e.scopes.size(), 2u);
    const EgressScope& b = e.scopes[0];
    EXPECT_EQ(b.name, "builds");
    EXPECT_EQ(b.id, 1);
    EXPECT_EQ(b.from.name, "trust");
    EXPECT_FALSE(b.source.any);
    EXPECT_TRUE(b.verify_sni);
    EXPECT_EQ(b.default_action, EgressAction::deny);
    ASSERT_EQ(b.rules.size(), 3u);
    EXPECT_EQ(b.rules[1].names[0].name, "mirror.bench.test");
    ASSERT_EQ(b.rules[1].ports.size(), 2u);
    EXPECT_EQ(b.rules[1].ports[1].lo, 8000);
    EXPECT_EQ(b.rules[2].addresses.size(), 2u);
    EXPECT_EQ(e.scopes[1].id, 2);
    EXPECT_EQ(e.scopes[1].default_action, EgressAction::allow);
    EXPECT_TRUE(e.scopes[1].source.any);
    EXPECT_EQ(e.find_scope("guests"), &e.scopes[1]);
    EXPECT_EQ(e.find_scope("nobody"), nullptr);
}

TEST(ConfigEgress, TheMostSpecificMatchingNameRuleDecides) {
    const Config c = parsed(kGood);
    const EgressScope& b = c.egress.scopes[0];
    // The wildcard deny comes first; the exact allow of one host still wins.
    auto d = decide_name(b, "mirror.bench.test");
    EXPECT_EQ(d.action, EgressAction::allow);
    EXPECT_EQ(d.rule, &b.rules[1]);
    d = decide_name(b, "other.bench.test");
    EXPECT_EQ(d.action, EgressAction::deny);
    EXPECT_EQ(d.rule, &b.rules[0]);
    // Not below *.bench.test: the exact allow? No: "bench.test" is the apex; the default decides.
    d = decide_name(b, "bench.test");
    EXPECT_EQ(d.action, EgressAction::deny);
    EXPECT_EQ(d.rule, nullptr);
    // Address rules never match a name.
    d = decide_name(b, "198.18.9.1");
    EXPECT_EQ(d.rule, nullptr);
    // The reverse order admits only that host too; a wildcard allow with a
    // deny of one host, in either order, denies only that host; a longer
    // suffix beats a shorter one; between equals the first rule decides.
    Config r = parsed(kBase + R"yaml(
egress:
  upstreams: 198.18.53.1
  scopes:
    s:
      from: trust
      rules:
        - { action: allow, name: host001.bench.test }
        - { action: deny, name: "*.bench.test" }
      default: allow
)yaml");
    const EgressScope& s = r.egress.scopes[0];
    EXPECT_EQ(decide_name(s, "host001.bench.test").action, EgressAction::allow);
    EXPECT_EQ(decide_name(s, "host002.bench.test").action, EgressAction::deny);
    EXPECT_EQ(decide_name(s, "other.test").action, EgressAction::allow);
    EXPECT_EQ(decide_name(s, "other.test").rule, nullptr);
    Config w = parsed(kBase + R"yaml(
egress:
  upstreams: 198.18.53.1
  scopes:
    s:
      from: trust
      rules:
        - { action: deny, name: bad.bench.test }
        - { action: allow, name: "*.bench.test" }
        - { action: deny, name: "*.deep.bench.test" }
        - { action: deny, name: "*.bench.test" }
)yaml");
    const EgressScope& ws = w.egress.scopes[0];
    EXPECT_EQ(decide_name(ws, "bad.bench.test").action, EgressAction::deny);
    EXPECT_EQ(decide_name(ws, "good.bench.test").action, EgressAction::allow);
    EXPECT_EQ(decide_name(ws, "good.bench.test").rule, &ws.rules[1]);
    EXPECT_EQ(decide_name(ws, "x.deep.bench.test").action, EgressAction::deny);
    EXPECT_EQ(decide_name(ws, "bench.test").rule, nullptr);
}

TEST(ConfigEgress, MistakesAreReportedWhereTheyAre) {
    EXPECT_EQ(one_error("egress: { upstreams: 198.18.53.1 }\n"),
              "t.yaml:4:9: egress: missing \"scopes\" (which sources the egress policy governs)");
    EXPECT_EQ(one_error("egress: { scopes: { s: { from: trust } } }\n"),
              "t.yaml:4:9: egress: missing \"upstreams\": the resolvers allowed names are forwarded to");
    EXPECT_EQ(one_error("egress: { upstreams: 198.18.53.1, scopes: { s: { from: dmz } } }\n"),
              "t.yaml:4:56: egress.scopes.s.from: unknown zone \"dmz\"");
    EXPECT_EQ(one_error("egress: { upstreams: 198.18.53.1, scopes: { s: { from: trust, source: nobody } } }\n"),
              "t.yaml:4:71: egress.scopes.s.source: unknown address-book entry \"nobody\"");
    EXPECT_EQ(one_error("egress: { upstreams: \"198.18.53.1:0\", scopes: { s: { from: trust } } }\n"),
              "t.yaml:4:22: egress.upstreams: \"198.18.53.1:0\": the port must be 1-65535");
    EXPECT_EQ(one_error("egress: { upstreams: resolver.test, scopes: { s: { from: trust } } }\n").find(
                  "t.yaml:4:22: egress.upstreams: \"resolver.test\" is not an upstream resolver's address"),
              0u);
    EXPECT_EQ(one_error("egress: { upstreams: 198.18.53.1, deny-answer: drop, scopes: { s: { from: trust } } }\n")
                  .find("t.yaml:4:48: egress.deny-answer: invalid value \"drop\""),
              0u);
    EXPECT_EQ(one_error("egress: { upstreams: 198.18.53.1, learned-ttl: { minimum: 2h, maximum: 1h }, scopes: { s: "
                        "{ from: trust } } }\n"),
              "t.yaml:4:48: egress.learned-ttl: minimum 7200s is longer than maximum 3600s");
}

TEST(ConfigEgress, RuleMistakesNameTheRule) {
    const std::string head = "egress:\n  upstreams: 198.18.53.1\n  scopes:\n    s:\n      from: trust\n      rules:\n";
    EXPECT_EQ(one_error(head + "        - { action: allow }\n"),
              "t.yaml:10:11: egress.scopes.s.rules[0]: missing \"name\" or \"address\" (what the rule allows or "
              "denies)");
    EXPECT_EQ(one_error(head + "        - { action: allow, name: a.test, address: 198.18.9.1 }\n"),
              "t.yaml:10:11: egress.scopes.s.rules[0]: a rule matches either names or addresses: split it into "
              "two rules");
    EXPECT_EQ(one_error(head + "        - { action: permit, name: a.test }\n").find(
                  "t.yaml:10:21: egress.scopes.s.rules[0].action: invalid value \"permit\""),
              0u);
    EXPECT_EQ(one_error(head + "        - { action: deny, name: [a.test, \"b*.test\"] }\n"),
              "t.yaml:10:42: egress.scopes.s.rules[0].name[1]: \"b*.test\": '*' is allowed only as the whole first "
              "label (\"*.example.test\")");
    EXPECT_EQ(one_error(head + "        - { action: deny, address: 198.18.9.1/16 }\n").find(
                  "t.yaml:10:36: egress.scopes.s.rules[0].address:"),
              0u);
    EXPECT_EQ(one_error(head + "        - { action: deny, name: a.test, destination-port: 70000 }\n").find(
                  "t.yaml:10:59: egress.scopes.s.rules[0].destination-port: port \"70000\" out of range"),
              0u);
    EXPECT_EQ(one_error(head + "        - { action: deny, name: a.test, port: 443 }\n").find(
                  "t.yaml:10:41: egress.scopes.s.rules[0].port: unknown key \"port\""),
              0u);
}

TEST(ConfigEgress, AGoodFileCompilesEgressAndAll) {
    const Config c = parsed(kGood);
    auto compiled = sluice::compiler::compile(c, 0);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    EXPECT_TRUE(compiled->egress.enabled);
    // builds (verify-sni) governs its address-book prefix of trust; guests all of untrust.
    ASSERT_FALSE(compiled->egress.sources_v4.empty());
    EXPECT_EQ(compiled->egress.sources_v4[0].second.scope_id, 1);
    EXPECT_EQ(compiled->egress.sources_v4[0].second.verify_sni, 1);
    EXPECT_EQ(compiled->egress.sources_v4.back().second.scope_id, 2);
    EXPECT_EQ(compiled->egress.sources_v4.back().second.verify_sni, 0);
}
