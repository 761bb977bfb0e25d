// Parsing every section of a valid file into the model (tests/data/configs/good-basic.yaml).
#include <gtest/gtest.h>

#include "config/load_config.h"

using namespace sluice::config;

namespace {

const Config& good_basic() {
    static const Config config = [] {
        auto loaded = read_config_file(SLUICE_TEST_DATA_DIR "/configs/good-basic.yaml");
        for (const auto& d : loaded.diagnostics) ADD_FAILURE() << format_diagnostic(d);
        return loaded.ok() ? *loaded.config : Config{};
    }();
    return config;
}

LoadResult parse(const std::string& text) { return parse_config(text, "t.yaml"); }

const char* kMinimal = "interfaces: { lan0: { zone: trust } }\nzones: { trust: {} }\n";

}  // namespace

TEST(ConfigParse, GoodBasicLoadsWithoutErrors) {
    auto result = load_config(SLUICE_TEST_DATA_DIR "/configs/good-basic.yaml");
    ASSERT_TRUE(result.ok()) << result.error().message;
}

TEST(ConfigParse, InterfacesWithVlanAndXdpMode) {
    const auto& c = good_basic();
    ASSERT_EQ(c.interfaces.size(), 3u);
    EXPECT_EQ(c.interfaces[0].name, "lan0");
    EXPECT_EQ(c.interfaces[0].xdp_mode, "auto");
    EXPECT_EQ(c.interfaces[0].zone.name, "trust");
    EXPECT_EQ(c.interfaces[1].xdp_mode, "generic");
    ASSERT_TRUE(c.interfaces[1].filter);
    EXPECT_EQ(c.interfaces[1].filter->name, "wan-in");
    EXPECT_EQ(c.interfaces[2].name, "wan0.100");
    EXPECT_EQ(c.interfaces[2].parent, "wan0");
    EXPECT_EQ(c.interfaces[2].vlan_id, 100);
    EXPECT_EQ(c.interfaces[0].location.line, 3);
    EXPECT_EQ(c.interfaces[0].location.column, 3);
}

TEST(ConfigParse, ZonesInFileOrder) {
    const auto& c = good_basic();
    ASSERT_EQ(c.zones.size(), 3u);
    EXPECT_EQ(c.zones[0].name, "trust");
    ASSERT_EQ(c.zones[0].host_inbound.size(), 3u);
    EXPECT_EQ(c.zones[0].host_inbound[0].name, "ping");
    EXPECT_EQ(c.zones[0].host_inbound[1].name, "ssh");
    EXPECT_EQ(c.zones[0].host_inbound[2].match.protocol, kProtoTcp);
    ASSERT_EQ(c.zones[0].host_inbound[2].match.ports.size(), 1u);
    EXPECT_EQ(c.zones[0].host_inbound[2].match.ports[0].lo, 8443);
    EXPECT_EQ(c.zones[1].screen.syn_proxy, ZoneScreen::SynProxy::above_rate);
    EXPECT_EQ(c.zones[1].screen.syn_proxy_rate, 1000u);
    EXPECT_EQ(c.zones[1].screen.source_sessions, 5000u);
    EXPECT_EQ(c.zones[1].screen.source_rate, 200u);
    EXPECT_EQ(c.zones[1].screen.destination_rate, 20000u);
    EXPECT_EQ(c.zones[0].screen.syn_proxy, ZoneScreen::SynProxy::off);
    EXPECT_EQ(c.zones[2].name, "dmz");  // `dmz:` with no value is an empty zone
}

TEST(ConfigParse, AddressBookMixesFamilies) {
    const auto& c = good_basic();
    const auto* lan = c.find_address("lan-net");
    ASSERT_NE(lan, nullptr);
    ASSERT_EQ(lan->prefixes.size(), 2u);
    EXPECT_EQ(lan->prefixes[0].to_string(), "198.18.1.0/24");
    EXPECT_EQ(lan->prefixes[1].to_string(), "2001:2:0:1::/64");
    const auto* web = c.find_address("web-servers");
    ASSERT_NE(web, nullptr);
    EXPECT_EQ(web->prefixes[0].length, 32);
    EXPECT_EQ(web->prefixes[1].length, 128);
    ASSERT_NE(c.find_address("lan-v4"), nullptr);  // a single scalar is a one-item list
    EXPECT_EQ(c.find_address("lan-v4")->prefixes.size(), 1u);
}

TEST(ConfigParse, ApplicationsWithPortListsAndRanges) {
    const auto& c = good_basic();
    const auto* web = c.find_application("web");
    ASSERT_NE(web, nullptr);
    EXPECT_EQ(web->protocol, kProtoTcp);
    EXPECT_EQ(web->destination_ports,
              (std::vector<PortRange>{{80, 80}, {443, 443}, {8000, 8999}}));
    EXPECT_EQ(c.find_application("high")->destination_ports, (std::vector<PortRange>{{1024, 65535}}));
    EXPECT_EQ(c.find_application("ping")->protocol, kProtoIcmp);
    EXPECT_TRUE(c.find_application("ping")->destination_ports.empty());
}

TEST(ConfigParse, PoliciesInOrderWithActions) {
    const auto& c = good_basic();
    ASSERT_EQ(c.policies.size(), 4u);
    const Policy& p0 = c.policies[0];
    EXPECT_EQ(p0.name, "lan-out");
    EXPECT_EQ(p0.from.name, "trust");
    EXPECT_EQ(p0.to.name, "untrust");
    EXPECT_FALSE(p0.source.any);
    ASSERT_EQ(p0.source.items.size(), 1u);
    EXPECT_EQ(p0.source.items[0].text, "lan-net");
    EXPECT_TRUE(p0.destination.any);
    EXPECT_FALSE(p0.any_application);
    ASSERT_EQ(p0.applications.size(), 2u);
    EXPECT_EQ(p0.applications[1].name, "ping");
    EXPECT_EQ(p0.action, PolicyAction::permit);
    EXPECT_EQ(c.policies[2].action, PolicyAction::inspect);
    EXPECT_EQ(c.policies[2].ruleset.name, "ctf");
    EXPECT_EQ(c.policies[3].action, PolicyAction::reject);
    EXPECT_TRUE(c.policies[3].any_application);
    EXPECT_TRUE(c.policies[3].source.any);
    EXPECT_EQ(c.default_action, PolicyAction::deny);
}

TEST(ConfigParse, LiteralPrefixesInPolicies) {
    auto r = parse(std::string(kMinimal) +
                   "policies:\n"
                   "  - { name: p, from: trust, to: trust, source: [198.18.1.0/24, \"2001:2::1\"],\n"
                   "      destination: [any, 198.18.2.0/24], action: deny }\n");
    ASSERT_TRUE(r.ok());
    const Policy& p = r.config->policies[0];
    ASSERT_EQ(p.source.items.size(), 2u);
    ASSERT_TRUE(p.source.items[1].prefix);
    EXPECT_EQ(p.source.items[1].prefix->length, 128);
    EXPECT_TRUE(p.destination.any);  // `any` anywhere in the list means any
}

TEST(ConfigParse, FiltersParsedInOrder) {
    const auto& c = good_basic();
    ASSERT_EQ(c.filters.size(), 1u);
    ASSERT_EQ(c.filters[0].rules.size(), 2u);
    EXPECT_EQ(c.filters[0].rules[0].action, FilterAction::drop);
    EXPECT_EQ(c.filters[0].rules[0].source.items[0].prefix->to_string(), "198.19.255.0/24");
    EXPECT_EQ(c.filters[0].rules[1].action, FilterAction::count);
    EXPECT_EQ(c.filters[0].rules[1].protocol, kProtoUdp);
    EXPECT_EQ(c.filters[0].rules[1].destination_ports, (std::vector<PortRange>{{53, 53}}));
}

TEST(ConfigParse, TimeoutsOverrideDefaults) {
    const auto& t = good_basic().timeouts;
    EXPECT_EQ(t.tcp_syn.count(), 20);
    EXPECT_EQ(t.tcp_established.count(), 3600);
    EXPECT_EQ(t.udp.count(), 90);
    EXPECT_EQ(t.icmp.count(), 10);
    EXPECT_EQ(t.other.count(), 60);     // not in the file: default
    EXPECT_EQ(t.fragment.count(), 30);
}

TEST(ConfigParse, TimeoutDefaults) {
    auto r = parse(kMinimal);
    ASSERT_TRUE(r.ok());
    const auto& t = r.config->timeouts;
    EXPECT_EQ(t.tcp_syn.count(), 30);
    EXPECT_EQ(t.tcp_established.count(), 1800);
    EXPECT_EQ(t.tcp_closing.count(), 30);
    EXPECT_EQ(t.tcp_time_wait.count(), 120);
    EXPECT_EQ(t.udp.count(), 60);
    EXPECT_EQ(t.icmp.count(), 30);
    EXPECT_EQ(r.config->default_action, PolicyAction::deny);
    EXPECT_TRUE(r.config->policies.empty());
}

TEST(ConfigParse, NatStructure) {
    const auto& nat = good_basic().nat;
    ASSERT_EQ(nat.pools.size(), 1u);
    EXPECT_TRUE(nat.pools[0].persistent);
    EXPECT_EQ(nat.pools[0].addresses[0].first.to_string(), "198.18.100.10/32");
    EXPECT_EQ(nat.pools[0].addresses[0].last.to_string(), "198.18.100.20/32");
    ASSERT_EQ(nat.source.size(), 2u);
    EXPECT_TRUE(nat.source[0].translate_interface);
    ASSERT_TRUE(nat.source[1].pool);
    EXPECT_EQ(nat.source[1].pool->name, "public");
    ASSERT_EQ(nat.destination.size(), 1u);
    EXPECT_EQ(nat.destination[0].port, 8080);
    EXPECT_EQ(nat.destination[0].translate_port, 80);
    EXPECT_EQ(nat.destination[0].translate_address.to_string(), "198.18.1.100/32");
    ASSERT_EQ(nat.static_rules.size(), 1u);
    ASSERT_EQ(nat.nptv6.size(), 1u);
    EXPECT_EQ(nat.nptv6[0].outside.to_string(), "2001:2:0:200::/64");
}

TEST(ConfigParse, InspectRulesets) {
    const auto& c = good_basic();
    ASSERT_EQ(c.rulesets.size(), 2u);
    EXPECT_EQ(c.ruleset_id("ctf"), 1);
    EXPECT_EQ(c.ruleset_id("light"), 2);
    EXPECT_TRUE(c.rulesets[0].fail_closed);
    EXPECT_FALSE(c.rulesets[0].inspect_bytes);
    EXPECT_FALSE(c.rulesets[1].fail_closed);
    EXPECT_EQ(c.rulesets[1].inspect_bytes, 65536u);
    ASSERT_EQ(c.rulesets[0].patterns.size(), 1u);
    EXPECT_EQ(c.rulesets[0].patterns[0].regex, "flag\\{[A-Za-z0-9_]+\\}");
    EXPECT_EQ(c.rulesets[0].patterns[0].direction, PatternDirection::server_to_client);
    EXPECT_EQ(c.rulesets[0].patterns[0].action, PatternAction::reject);
}

TEST(ConfigParse, LimitsSessions) {
    EXPECT_EQ(good_basic().limits.sessions, 65536u);
    ASSERT_TRUE(good_basic().limits.sessions_location);
    auto absent = parse(kMinimal);
    ASSERT_TRUE(absent.ok());
    // Absent: the table sluice had before the size was configurable.
    EXPECT_EQ(absent.config->limits.sessions, 131072u);
    EXPECT_EQ(session_map_entries(absent.config->limits.sessions), 262144u);
    EXPECT_FALSE(absent.config->limits.sessions_location);
    auto set = parse(std::string(kMinimal) + "limits: { sessions: 1024 }\n");
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set.config->limits.sessions, 1024u);
    ASSERT_TRUE(set.config->limits.sessions_location);
    EXPECT_EQ(set.config->limits.sessions_location->line, 3);
    auto empty = parse(std::string(kMinimal) + "limits:\n");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty.config->limits.sessions, 131072u);
}

// The estimate by hand for the default size: per entry a 48-byte element
// header, the key (16 / 40) and the 144-byte value, plus a 16-byte bucket;
// 262144 entries per family.
TEST(ConfigParse, SessionTableMemoryEstimate) {
    const uint64_t entries = 262144;
    EXPECT_EQ(session_table_bytes_estimate(131072),
              entries * (48 + 16 + 144 + 16) + entries * (48 + 40 + 144 + 16));
    // Non-power-of-two sizes still get power-of-two bucket arrays.
    EXPECT_EQ(hash_map_bytes_estimate(3000, 16, 144), 3000u * 208 + 4096u * 16);
}
