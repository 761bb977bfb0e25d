// The published state (daemon/published_state.h): what the daemon writes is
// what show reads back, field by field, and a file that lacks a field is
// refused by name instead of read as a default.
#include <gtest/gtest.h>

#include "daemon/published_state.h"

using namespace sluice;
using nlohmann::json;

namespace {

state::PublishedState sample() {
    state::PublishedState s;
    s.instance = "default";
    s.pid = 4242;
    s.config = "/etc/sluice/sluice.yaml";
    s.pin_dir = "/sys/fs/bpf/sluice/default";
    s.config_generation = 3;
    s.reloads = 2;
    s.last_reload = {false, "fw.yaml:3:5: policies[0]: unknown zone"};
    state::Interface lan;
    lan.name = "lan0";
    lan.zone_id = 1;
    lan.xdp_mode_requested = "auto";
    lan.device = "lan0";
    lan.ifindex = 7;
    lan.xdp_mode = "generic";
    state::Interface vlan;
    vlan.name = "wan0.100";
    vlan.zone_id = 2;
    vlan.vlan_id = 100;
    vlan.xdp_mode_requested = "native";
    s.interfaces = {lan, vlan};
    s.zones = {{"trust", 1}, {"untrust", 2}};
    s.policies = {{"web", 0, "trust", "untrust", "permit", "", {"lan-net"}, {}, {"http"}}};
    s.filters = {{"wan-in", 1, {"wan0"}, {{"drop-bogons", "drop", 0}}}};
    s.classifier = {3, 1, 12, 0, 2, 4096};
    state::NatRule rule;
    rule.kind = "source";
    rule.name = "lan-out";
    rule.match = "trust -> untrust";
    rule.translation = "interface";
    rule.details = {{"from", "trust"}, {"to", "untrust"}};
    s.nat.rules = {rule};
    s.nat.pools = {{"public", 0, {"198.18.100.10-198.18.100.20"}, {{"ipv4", "198.18.100.10", "198.18.100.20"}}, 1024,
                    65535, true}};
    s.host_inbound.services = {{1, "ping", "ICMP echo"}};
    s.host_inbound.zones = {{"trust", 1, false, {1}}};
    state::ScreenZone screen;
    screen.zone = "untrust";
    screen.id = 2;
    screen.syn_proxy = "above";
    screen.syn_proxy_rate = 1000;
    screen.source_sessions = 100;
    screen.scan = state::ScanScreen{1, "block", 30, 0, 60};
    s.screens = {screen};
    s.inspect.running = true;
    s.inspect.workers = 2;
    s.inspect.tcp_port = 40001;
    s.inspect.udp_port = 40002;
    s.inspect.counters = "/run/sluice/default/inspect-counters";
    s.inspect.rulesets = {{"ctf", 1, "closed", std::nullopt, {{"flag", "flag\\{", "both", "reject", false}}}};
    s.default_action = "deny";
    return s;
}

TEST(PublishedState, WhatIsWrittenIsWhatIsRead) {
    const json written = sample();
    auto read = state::parse_published_state(written);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(json(read.value()), written);
    EXPECT_EQ(read->interfaces[0].device, "lan0");
    EXPECT_TRUE(read->interfaces[1].device.empty());
    EXPECT_TRUE(read->policies[0].destination.empty());
    EXPECT_EQ(read->screens[0].syn_proxy_rate, 1000u);
    EXPECT_FALSE(read->inspect.rulesets[0].inspect_bytes.has_value());
}

TEST(PublishedState, TheJsonKeepsItsOperatorFacingShape) {
    const json j = sample();
    EXPECT_EQ(j["policies"][0]["destination"], "any");
    EXPECT_EQ(j["policies"][0]["source"], json::array({"lan-net"}));
    EXPECT_FALSE(j["interfaces"][1].contains("device"));
    EXPECT_EQ(j["screens"][0]["syn_proxy"], (json{{"above", 1000}}));
    EXPECT_FALSE(j["screens"][0].contains("destination_new_sessions_per_second"));
    EXPECT_EQ(j["inspect"]["rulesets"][0]["inspect_bytes"], "unlimited");
    EXPECT_EQ(j["nat"]["rules"][0]["from"], "trust");  // the rule's own fields stay beside its summary
}

TEST(PublishedState, AMissingFieldIsRefusedByName) {
    json j = sample();
    j["zones"][0].erase("id");
    auto read = state::parse_published_state(j);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().code, ErrorCode::Incompatible);
    EXPECT_NE(read.error().message.find("'id'"), std::string::npos) << read.error().message;

    json renamed = sample();
    renamed["default"] = renamed["default_action"];
    renamed.erase("default_action");
    auto again = state::parse_published_state(renamed);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().message.find("default_action"), std::string::npos) << again.error().message;
}

}  // namespace
