// The compiler's map entries for small configs, checked entry by entry.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "compiler_test_util.h"

using namespace sluice;
using namespace sluice::test;
using V = std::vector<uint32_t>;

namespace {

const std::string kHeader =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust }, wan0.100: { zone: dmz } }\n"
    "zones: { trust: {}, untrust: {}, dmz: {} }\n";

template <typename Table>
const classifier_classes* find_lpm(const Table& table, uint32_t prefixlen, const std::string& addr) {
    auto bytes = address(addr);
    for (const auto& [key, value] : table)
        if (key.prefixlen == prefixlen && std::memcmp(key.addr, bytes.data(), sizeof key.addr) == 0) return &value;
    return nullptr;
}

// The rules a source / destination LPM entry stands for.
template <typename Table>
V lpm_rules(const CompiledClassifier& t, Field field, const Table& table, uint32_t prefixlen, const std::string& addr) {
    const classifier_classes* cls = find_lpm(table, prefixlen, addr);
    if (!cls) {
        ADD_FAILURE() << "no LPM entry /" << prefixlen - 8 << " " << addr;
        return {};
    }
    return class_rules(t, field, *cls);
}

// The result a first packet gets from the tables (nullopt: no rule).
std::optional<compiler::ClassifierMatch> result_of(const CompiledConfig& c, const compiler::PacketSpec& p) {
    return compiler::classify_tables(c.tables, CLASSIFIER_SCOPE_POLICY, p.from_zone, p.to_zone, p);
}

}  // namespace

TEST(Compiler, ZonesAndInterfaces) {
    auto c = compile_text(kHeader);
    ASSERT_EQ(c.zones.size(), 3u);
    EXPECT_EQ(c.zones[0].name, "trust");
    EXPECT_EQ(c.zones[0].id, 1);
    EXPECT_EQ(c.zones[2].id, 3);
    ASSERT_EQ(c.interfaces.size(), 3u);
    EXPECT_EQ(c.interfaces[1].zone_id, 2);
    EXPECT_EQ(c.interfaces[1].vlan_id, 0);
    EXPECT_EQ(c.interfaces[2].name, "wan0.100");
    EXPECT_EQ(c.interfaces[2].parent, "wan0");
    EXPECT_EQ(c.interfaces[2].vlan_id, 100);
    EXPECT_EQ(c.interfaces[2].zone_id, 3);
    EXPECT_EQ(c.interfaces[2].xdp_mode, "auto");
}

TEST(Compiler, NoPoliciesHaveEmptyTables) {
    auto c = compile_text(kHeader);
    EXPECT_TRUE(c.tables.scopes.empty());
    ASSERT_EQ(c.tables.results.size(), 1u);  // only the unused id 0
    ASSERT_EQ(c.tables.src_v4.size(), 1u);   // /0 per family, class 0 (no rule)
    EXPECT_TRUE(no_class(c.tables.src_v4[0].second));
    ASSERT_EQ(c.tables.dst_v6.size(), 1u);
    EXPECT_EQ(c.tables.port_class.size(), size_t{POLICY_PROTO_SLOTS} * POLICY_PORTS);
    EXPECT_EQ(c.tables.sport_class.size(), size_t{POLICY_PROTO_SLOTS} * POLICY_PORTS);
    for (const auto& cls : c.tables.port_class) ASSERT_TRUE(no_class(cls));
    EXPECT_FALSE(result_of(c, packet(1, 2, "198.18.1.1", "198.18.100.200", 6, 80)));
}

TEST(Compiler, ResultsCarryPolicyIdActionAndRuleset) {
    auto c = compile_text(kHeader +
                          "policies:\n"
                          "  - { name: a, from: trust, to: untrust, source: 198.18.1.0/24, action: permit }\n"
                          "  - { name: b, from: trust, to: untrust, action: reject }\n"
                          "  - { name: c, from: untrust, to: dmz, action: { inspect: two } }\n"
                          "  - { name: d, from: untrust, to: trust, action: deny }\n"
                          "default-action: reject\n"
                          "inspect: { rulesets: { one: { patterns: [] }, two: { patterns: [] } } }\n");
    auto expect = [&](const compiler::PacketSpec& p, uint32_t rule, uint8_t action, uint16_t ruleset) {
        auto r = result_of(c, p);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->rule, rule);
        EXPECT_EQ(r->action, action);
        EXPECT_EQ(r->ruleset_id, ruleset);
        EXPECT_TRUE(r->counted.empty());  // policies count nothing
    };
    expect(packet(1, 2, "198.18.1.1", "198.18.100.200", 6, 80), 0, POLICY_ACTION_PERMIT, 0);
    expect(packet(1, 2, "198.18.2.1", "198.18.100.200", 6, 80), 1, POLICY_ACTION_REJECT, 0);
    expect(packet(2, 3, "198.18.100.1", "198.18.1.5", 17, 53), 2, POLICY_ACTION_INSPECT, 2);
    expect(packet(2, 1, "198.18.100.1", "198.18.1.5", 1, 8), 3, POLICY_ACTION_DENY, 0);
    EXPECT_EQ(c.tables.results.size(), 5u);  // four outcomes + unused 0
    EXPECT_EQ(c.default_action, POLICY_ACTION_REJECT);
    ASSERT_EQ(c.policies.size(), 4u);
    EXPECT_EQ(c.policies[2].ruleset, "two");
    EXPECT_EQ(c.policies[2].from_zone, "untrust");
}

TEST(Compiler, ScopeClassesAndGeneration) {
    auto c = compile_text(kHeader +
                              "policies:\n"
                              "  - { name: a, from: trust, to: untrust, action: permit }\n"
                              "  - { name: b, from: untrust, to: trust, action: deny }\n"
                              "  - { name: c, from: trust, to: untrust, action: deny }\n"
                              "  - { name: d, from: trust, to: trust, action: permit }\n",
                          1);
    ASSERT_EQ(c.tables.scopes.size(), 3u);
    for (const auto& [key, cls] : c.tables.scopes) {
        EXPECT_EQ(key.generation, 1);
        EXPECT_EQ(key.kind, CLASSIFIER_SCOPE_POLICY);
        EXPECT_EQ(key.pad[0] | key.pad[1], 0);
        if (key.a == 1 && key.b == 2) EXPECT_EQ(class_rules(c.tables, kScope, cls), (V{0, 2}));
        else if (key.a == 2 && key.b == 1) EXPECT_EQ(class_rules(c.tables, kScope, cls), (V{1}));
        else if (key.a == 1 && key.b == 1) EXPECT_EQ(class_rules(c.tables, kScope, cls), (V{3}));
        else ADD_FAILURE() << "unexpected pair " << key.a << "->" << key.b;
    }
    // Generation 1 writes the upper half of pol_cross.
    ASSERT_EQ(c.tables.layout.groups, 1u);
    EXPECT_EQ(c.tables.layout.table[0][0].base, CLASSIFIER_CROSS_PER_GEN);
    EXPECT_EQ(c.tables.cross_first, CLASSIFIER_CROSS_PER_GEN);
    for (int i = 1; i < CLASSIFIER_TABLES; ++i)
        EXPECT_GE(c.tables.layout.table[0][i].base, c.tables.layout.table[0][i - 1].base);
}

TEST(Compiler, RuleIndexBeyondFirstWord) {
    std::string text = kHeader + "policies:\n";
    for (int i = 0; i < 70; ++i)
        text += "  - { name: p" + std::to_string(i) + ", from: " + (i == 65 ? "dmz" : "trust") +
                ", to: untrust, action: permit }\n";
    auto c = compile_text(text);
    auto r = result_of(c, packet(3, 2, "198.18.1.1", "198.18.100.200", 6, 80));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->rule, 65u);
    r = result_of(c, packet(1, 2, "198.18.1.1", "198.18.100.200", 6, 80));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->rule, 0u);
}

TEST(Compiler, LpmKeysCountTheGenerationByte) {
    auto c = compile_text(kHeader +
                              "policies:\n"
                              "  - { name: a, from: trust, to: untrust, source: [198.18.1.0/24, \"2001:2:0:1::/64\"],\n"
                              "      destination: 198.18.100.200, action: permit }\n",
                          1);
    const auto& t = c.tables;
    for (const auto& [key, cls] : t.src_v4) {
        EXPECT_EQ(key.generation, 1);
        EXPECT_EQ(key.pad[0] | key.pad[1] | key.pad[2], 0);
    }
    ASSERT_EQ(t.src_v4.size(), 2u);
    ASSERT_NE(find_lpm(t.src_v6, 8 + 64, "2001:2:0:1::"), nullptr);
    ASSERT_NE(find_lpm(t.dst_v4, 8 + 32, "198.18.100.200"), nullptr);
    EXPECT_EQ(t.src_v6[0].first.generation, 1);
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v4, 8 + 24, "198.18.1.0"), V{0});
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v4, 8, "0.0.0.0"), V{});
    EXPECT_EQ(lpm_rules(t, kDestination, t.dst_v6, 8, "::"), V{});  // v4-only destination: no v6 match
    EXPECT_EQ(lpm_rules(t, kDestination, t.dst_v4, 8, "0.0.0.0"), V{});
}

TEST(Compiler, LpmValuesIncludeEnclosingPrefixesAndAny) {
    auto c = compile_text(kHeader +
                          "address-book: { wide: [198.18.0.0/15], narrow: [198.18.1.0/24, \"2001:2::/48\"] }\n"
                          "policies:\n"
                          "  - { name: a, from: trust, to: untrust, source: wide, action: permit }\n"
                          "  - { name: b, from: trust, to: untrust, source: narrow, action: permit }\n"
                          "  - { name: c, from: trust, to: untrust, action: deny }\n"
                          "  - { name: d, from: trust, to: untrust, source: 198.18.1.128/25, action: deny }\n");
    const auto& t = c.tables;
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v4, 8, "0.0.0.0"), (V{2}));
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v4, 8 + 15, "198.18.0.0"), (V{0, 2}));
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v4, 8 + 24, "198.18.1.0"), (V{0, 1, 2}));
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v4, 8 + 25, "198.18.1.128"), (V{0, 1, 2, 3}));
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v6, 8, "::"), (V{2}));
    EXPECT_EQ(lpm_rules(t, kSource, t.src_v6, 8 + 48, "2001:2::"), (V{1, 2}));
    // Destination: every rule is `any`, so only /0 per family, holding all rules, one class.
    ASSERT_EQ(t.dst_v4.size(), 1u);
    EXPECT_EQ(class_rules(t, kDestination, t.dst_v4[0].second), (V{0, 1, 2, 3}));
    EXPECT_EQ(t.dst_v6[0].second.group[0], t.dst_v4[0].second.group[0]);
}

TEST(Compiler, PortClassesForListsAndRanges) {
    auto c = compile_text(kHeader +
                          "applications:\n"
                          "  web: { protocol: tcp, destination-port: [80, 443, 8000-8999] }\n"
                          "  high: { protocol: tcp, destination-port: 1024-65535 }\n"
                          "  dns: { protocol: udp, destination-port: 53 }\n"
                          "  alltcp: { protocol: tcp }\n"
                          "policies:\n"
                          "  - { name: a, from: trust, to: untrust, application: web, action: permit }\n"
                          "  - { name: b, from: trust, to: untrust, application: high, action: permit }\n"
                          "  - { name: c, from: trust, to: untrust, application: [dns, alltcp], action: permit }\n");
    const auto& t = c.tables;
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 80), (V{0, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 79), (V{2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 443), (V{0, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 1023), (V{2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 1024), (V{1, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 7999), (V{1, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 8000), (V{0, 1, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 8999), (V{0, 1, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 9000), (V{1, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 65535), (V{1, 2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_TCP, 0), (V{2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_UDP, 53), (V{2}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_UDP, 80), (V{}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_ICMP, 8), (V{}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_OTHER, 47), (V{}));
    // Points with the same rule set share one class: {}, {2}, {0,2}, {1,2}, {0,1,2}.
    ASSERT_EQ(t.groups.size(), 1u);
    EXPECT_EQ(t.groups[0].field_sets[kDestinationPort].size(), 5u);
}

TEST(Compiler, AnyApplicationCoversEverySlot) {
    auto c = compile_text(kHeader +
                          "applications: { dns: { protocol: udp, destination-port: 53 } }\n"
                          "policies:\n"
                          "  - { name: a, from: trust, to: untrust, application: dns, action: permit }\n"
                          "  - { name: b, from: trust, to: untrust, action: deny }\n"
                          "  - { name: c, from: trust, to: untrust, application: [dns, any], action: deny }\n");
    const auto& t = c.tables;
    for (int slot = 0; slot < POLICY_PROTO_SLOTS; ++slot) {
        EXPECT_EQ(app_rules(t, slot, 0), (V{1, 2})) << slot;
        EXPECT_EQ(app_rules(t, slot, 65535), (V{1, 2})) << slot;
    }
    EXPECT_EQ(app_rules(t, POLICY_PROTO_UDP, 53), (V{0, 1, 2}));
}

TEST(Compiler, IcmpApplicationIsEchoInBothFamilies) {
    auto c = compile_text(kHeader +
                          "applications: { ping: { protocol: icmp }, ping6: { protocol: icmpv6 } }\n"
                          "policies:\n"
                          "  - { name: a, from: trust, to: untrust, application: ping, action: permit }\n"
                          "  - { name: b, from: trust, to: untrust, application: ping6, action: permit }\n");
    const auto& t = c.tables;
    EXPECT_EQ(app_rules(t, POLICY_PROTO_ICMP, 8), (V{0}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_ICMPV6, 128), (V{0, 1}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_ICMP, 0), (V{}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_ICMP, 128), (V{}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_ICMPV6, 8), (V{}));
    EXPECT_EQ(app_rules(t, POLICY_PROTO_ICMPV6, 129), (V{}));
}

TEST(Compiler, ClassifiesPacketsOfTheExampleConfig) {
    auto loaded = config::read_config_file(SLUICE_TEST_DATA_DIR "/configs/good-basic.yaml");
    ASSERT_TRUE(loaded.ok());
    auto compiled = compiler::compile(*loaded.config, 0);
    ASSERT_TRUE(compiled.ok());
    const auto& t = compiled->tables;
    // zones: trust=1 untrust=2 dmz=3
    auto check = [&](const compiler::PacketSpec& p, std::optional<uint32_t> expected) {
        EXPECT_EQ(compiler::classify_tables(t, p), expected);
        EXPECT_EQ(compiler::classify_linear(*loaded.config, p), expected);
    };
    check(packet(1, 2, "198.18.1.10", "198.18.100.200", 6, 80), 0u);       // lan-out, http
    check(packet(1, 2, "2001:2:0:1::10", "2001:2:0:100::200", 58, 128), 0u);  // lan-out, ping6
    check(packet(1, 2, "198.18.1.10", "198.18.100.200", 1, 8), 0u);        // lan-out, ping
    check(packet(1, 2, "198.18.1.10", "198.18.100.200", 1, 0), std::nullopt);  // echo reply: no policy
    check(packet(1, 2, "198.18.1.10", "198.18.100.200", 17, 53), 1u);      // lan-dns
    check(packet(1, 2, "198.18.2.10", "198.18.100.200", 6, 80), std::nullopt);  // not lan-net
    check(packet(1, 2, "198.18.1.10", "198.18.100.200", 6, 443), std::nullopt); // https not allowed
    check(packet(2, 3, "198.18.100.7", "198.18.100.200", 6, 8080), 2u);    // web-in
    check(packet(2, 3, "198.18.100.7", "198.18.100.201", 6, 8080), std::nullopt);
    check(packet(2, 1, "198.18.100.7", "198.18.1.10", 47, 0), 3u);         // nothing-in, any protocol
    check(packet(3, 1, "198.18.100.7", "198.18.1.10", 6, 22), std::nullopt);   // no such pair
    EXPECT_EQ(compiler::classify_tables(t, CLASSIFIER_SCOPE_POLICY, 2, 3,
                                        packet(2, 3, "198.18.100.7", "198.18.100.200", 6, 8080))->ruleset_id, 1);
}

TEST(Compiler, TimeoutsInNanoseconds) {
    auto c = compile_text(kHeader + "timeouts: { tcp-established: 2h, udp: 45s, fragment: 10s }\n");
    EXPECT_EQ(c.timeout_ns[TIMEOUT_TCP_SYN], 30'000'000'000ull);
    EXPECT_EQ(c.timeout_ns[TIMEOUT_TCP_ESTABLISHED], 7'200'000'000'000ull);
    EXPECT_EQ(c.timeout_ns[TIMEOUT_TCP_CLOSING], 30'000'000'000ull);
    EXPECT_EQ(c.timeout_ns[TIMEOUT_TCP_TIME_WAIT], 120'000'000'000ull);
    EXPECT_EQ(c.timeout_ns[TIMEOUT_UDP], 45'000'000'000ull);
    EXPECT_EQ(c.timeout_ns[TIMEOUT_ICMP], 30'000'000'000ull);
    EXPECT_EQ(c.timeout_ns[TIMEOUT_OTHER], 60'000'000'000ull);
    EXPECT_EQ(c.timeout_ns[TIMEOUT_FRAGMENT], 10'000'000'000ull);
}

TEST(Compiler, RejectsBadGeneration) {
    auto config = config_from(kHeader);
    EXPECT_FALSE(compiler::compile(config, 2).ok());
    EXPECT_TRUE(compiler::compile(config, 1).ok());
}
