// The ha: section (docs/ha.md): the cluster's HA file parses into the model;
// every kind of mistake is reported with its file position.
#include <gtest/gtest.h>

#include "config/load_config.h"

using namespace sluice::config;

namespace {

Config good_ha() {
    auto loaded = read_config_file(SLUICE_TEST_DATA_DIR "/configs/good-ha.yaml");
    for (const auto& d : loaded.diagnostics) ADD_FAILURE() << format_diagnostic(d);
    return loaded.ok() ? *loaded.config : Config{};
}

std::vector<std::string> errors_of(const std::string& text) {
    auto result = parse_config(text, "t.yaml");
    std::vector<std::string> out;
    for (const auto& d : result.diagnostics) out.push_back(format_diagnostic(d));
    return out;
}

const std::string kBase =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust }, fab0: { zone: fabric } }\n"
    "zones: { trust: {}, untrust: {}, fabric: {} }\n";

}  // namespace

TEST(ConfigHa, TheClusterPairParses) {
    const Config c = good_ha();
    const Ha& ha = c.ha;
    ASSERT_TRUE(ha.enabled);
    EXPECT_EQ(ha.fabric, "fab0");
    EXPECT_EQ(ha.port, kDefaultHaPort);
    EXPECT_EQ(ha.heartbeat_interval.count(), 20);
    EXPECT_EQ(ha.hold_time.count(), 100);
    ASSERT_EQ(ha.nodes.size(), 2u);
    EXPECT_EQ(ha.nodes[0].name, "fw0");
    EXPECT_EQ(ha.nodes[1].id, 2);
    EXPECT_EQ(ha.nodes[1].fabric_address.text, "198.18.2.2");
    EXPECT_EQ(ha.peer_of("fw0")->name, "fw1");
    EXPECT_EQ(ha.peer_of("fw9"), nullptr);
    ASSERT_EQ(ha.groups.size(), 1u);
    const HaGroup& g = ha.groups[0];
    EXPECT_EQ(g.name, "gateway");
    EXPECT_EQ(g.id, 1);
    EXPECT_TRUE(g.preempt);
    EXPECT_EQ(g.priority.at("fw0"), 200);
    EXPECT_EQ(g.priority.at("fw1"), 100);
    ASSERT_EQ(g.interfaces.size(), 2u);
    EXPECT_EQ(g.interfaces[0].name, "lan0");
    EXPECT_EQ(g.interfaces[0].virtual_mac, (std::array<uint8_t, 6>{0x02, 0x53, 0x4c, 0x00, 0x01, 0x01}));
    ASSERT_EQ(g.interfaces[0].addresses.size(), 2u);
    EXPECT_EQ(g.interfaces[0].addresses[0].length, 24);
    EXPECT_EQ(g.interfaces[0].addresses[0].addr[3], 254);  // host bits kept
    EXPECT_EQ(g.interfaces[0].addresses[1].family, Family::ipv6);
    EXPECT_EQ(g.interfaces[0].addresses[1].length, 64);
    EXPECT_EQ(ha.group_of_interface("wan0"), &ha.groups[0]);
    EXPECT_EQ(ha.group_of_interface("fab0"), nullptr);
    EXPECT_TRUE(g.monitor.empty());  // the group's interfaces
}

TEST(ConfigHa, NoSectionNoHa) {
    auto result = parse_config(kBase, "t.yaml");
    ASSERT_TRUE(result.ok());
    EXPECT_FALSE(result.config->ha.enabled);
}

TEST(ConfigHa, EveryMistakeOfBadHaYaml) {
    auto result = read_config_file(SLUICE_TEST_DATA_DIR "/configs/bad-ha.yaml");
    std::vector<std::string> lines;
    for (Diagnostic d : result.diagnostics) {
        d.file = "bad-ha.yaml";
        lines.push_back(format_diagnostic(d));
    }
    const std::vector<std::string> expected = {
        "bad-ha.yaml:7:11: ha.fabric: unknown interface \"fab1\" (did you mean \"fab0\"?) (an HA interface must be "
        "listed under interfaces:)",
        "bad-ha.yaml:8:14: ha.heartbeat: hold-time 100ms is less than 3 heartbeat intervals (150ms): one late "
        "heartbeat would fail the group over",
        "bad-ha.yaml:10:35: ha.nodes.fw0.fabric-address: \"198.18.2.1/30\": write the address alone, without a "
        "prefix length",
        "bad-ha.yaml:11:16: ha.nodes.fw1.id: node id 1 is used twice",
        "bad-ha.yaml:14:17: ha.groups.gateway.priority: no priority for node \"fw1\"",
        "bad-ha.yaml:14:29: ha.groups.gateway.priority.fw2: unknown node \"fw2\" (did you mean \"fw0\"?) (the nodes "
        "are those under ha.nodes)",
        "bad-ha.yaml:16:30: ha.groups.gateway.interfaces.lan0.virtual-mac: \"03:53:4c:00:01:01\" is a multicast MAC "
        "address; a virtual MAC must be unicast",
        "bad-ha.yaml:16:63: ha.groups.gateway.interfaces.lan0.addresses[0]: \"198.18.1.254\" has no prefix length: "
        "write the subnet's, e.g. 198.18.1.254/24",
        "bad-ha.yaml:17:9: ha.groups.gateway.interfaces.wan1: unknown interface \"wan1\" (did you mean \"wan0\"?) (an "
        "HA interface must be listed under interfaces:)",
    };
    EXPECT_EQ(lines, expected);
}

TEST(ConfigHa, ShapesAndRanges) {
    const std::string ha_head = "ha:\n  fabric: fab0\n  nodes:\n    a: { id: 1, fabric-address: 198.18.2.1 }\n";
    auto e = errors_of(kBase + ha_head + "  groups: { g: { priority: { a: 1 }, interfaces: { lan0: { virtual-mac: "
                                         "\"02:00:00:00:00:01\" } } } }\n");
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0], "t.yaml:6:5: ha.nodes: 1 node: an HA pair has exactly two");

    e = errors_of(kBase + ha_head +
                  "    b: { id: 2, fabric-address: \"2001:2:0:2::2\" }\n"
                  "  port: 0\n  heartbeat: { interval: 20 }\n"
                  "  groups: { g: { priority: { a: 255, b: 1 }, preempt: sometimes, interfaces: { lan0: { "
                  "virtual-mac: \"02:00:00:00:00\" } } } }\n");
    const std::vector<std::string> expected = {
        "t.yaml:7:33: ha.nodes.b.fabric-address: the two fabric addresses are of different families (198.18.2.1, "
        "2001:2:0:2::2)",
        "t.yaml:8:9: ha.port: \"0\" is not a UDP port (1-65535)",
        "t.yaml:9:26: ha.heartbeat.interval: invalid interval \"20\" (expected a positive number with ms or s, e.g. "
        "20ms, 1s)",
        "t.yaml:10:33: ha.groups.g.priority.a: \"255\" is not a priority (1-254)",
        "t.yaml:10:55: ha.groups.g.preempt: expected true or false, got \"sometimes\"",
        "t.yaml:10:101: ha.groups.g.interfaces.lan0.virtual-mac: \"02:00:00:00:00\" is not a MAC address (expected six "
        "hex bytes, 02:53:4c:00:01:01)",
    };
    EXPECT_EQ(e, expected);

    // The fabric in a group, and one interface in two groups.
    e = errors_of(kBase + ha_head +
                  "    b: { id: 2, fabric-address: 198.18.2.2 }\n"
                  "  groups:\n"
                  "    g: { priority: { a: 1, b: 2 }, interfaces: { fab0: { virtual-mac: \"02:00:00:00:00:01\" } } }\n"
                  "    h: { priority: { a: 1, b: 2 }, interfaces: { lan0: { virtual-mac: \"02:00:00:00:00:02\" } } }\n"
                  "    i: { priority: { a: 1, b: 2 }, interfaces: { lan0: { virtual-mac: \"02:00:00:00:00:02\" } } }\n");
    const std::vector<std::string> expected2 = {
        "t.yaml:9:50: ha.groups.g.interfaces.fab0: the fabric interface cannot be in a group (it must stay up on both "
        "nodes)",
        "t.yaml:11:50: ha.groups.i.interfaces.lan0: interface \"lan0\" is in two groups",
        "t.yaml:11:50: ha.groups.i.interfaces.lan0.virtual-mac: this virtual MAC is used twice",
    };
    EXPECT_EQ(e, expected2);

}
