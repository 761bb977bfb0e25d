// The NAT section the daemon writes to the state file (what `show nat` lists
// as rules and pools), and the accept_local switch NAT configs turn on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "config/load_config.h"
#include "daemon/accept_local.h"
#include "daemon/nat_state.h"

using namespace sluice;
using nlohmann::json;

namespace {

const std::string kConfig = SLUICE_TEST_DATA_DIR "/configs/good-basic.yaml";

json rule(const json& rules, const std::string& kind, int index) {
    for (const auto& r : rules)
        if (r["kind"] == kind && r["index"] == index) return r;
    return nullptr;
}

}  // namespace

TEST(NatState, EveryRuleWithKindIndexNameAndText) {
    auto cfg = config::load_config(kConfig);
    ASSERT_TRUE(cfg) << cfg.error().message;
    json nat = json(nat_state(cfg->nat));
    ASSERT_EQ(nat["rules"].size(), 5u);

    json lan_out = rule(nat["rules"], "source", 0);
    EXPECT_EQ(lan_out["name"], "lan-out");
    EXPECT_EQ(lan_out["from"], "trust");
    EXPECT_EQ(lan_out["to"], "untrust");
    EXPECT_EQ(lan_out["source"], json::array({"lan-net"}));
    EXPECT_EQ(lan_out["destination"], "any");
    EXPECT_EQ(lan_out["translation"], "interface");
    EXPECT_EQ(lan_out["match"], "trust -> untrust, source lan-net, destination any");

    json lan_pool = rule(nat["rules"], "source", 1);
    EXPECT_EQ(lan_pool["translation"], "pool public");
    EXPECT_EQ(lan_pool["pool"], "public");

    json web_in = rule(nat["rules"], "destination", 0);
    EXPECT_EQ(web_in["name"], "web-in");
    EXPECT_EQ(web_in["match"], "from untrust, tcp 198.18.100.1:8080");
    EXPECT_EQ(web_in["translation"], "198.18.1.100:80");

    json st = rule(nat["rules"], "static", 0);
    EXPECT_EQ(st["inside"], "198.18.1.50");
    EXPECT_EQ(st["outside"], "198.18.100.50");
    json npt = rule(nat["rules"], "nptv6", 0);
    EXPECT_EQ(npt["inside"], "2001:2:0:1::/64");
    EXPECT_EQ(npt["outside"], "2001:2:0:200::/64");
}

TEST(NatState, PoolsWithRangesAndPorts) {
    auto cfg = config::load_config(kConfig);
    ASSERT_TRUE(cfg) << cfg.error().message;
    json pools = json(nat_state(cfg->nat))["pools"];
    ASSERT_EQ(pools.size(), 1u);
    EXPECT_EQ(pools[0]["name"], "public");
    EXPECT_EQ(pools[0]["index"], 0);
    EXPECT_EQ(pools[0]["addresses"], json::array({"198.18.100.10-198.18.100.20"}));
    EXPECT_EQ(pools[0]["ranges"][0],
              (json{{"family", "ipv4"}, {"first", "198.18.100.10"}, {"last", "198.18.100.20"}}));
    EXPECT_EQ(pools[0]["port_first"], 1024);
    EXPECT_EQ(pools[0]["port_last"], 65535);
    EXPECT_EQ(pools[0]["persistent"], true);
}

TEST(NatState, PoolRangesReadAsWritten) {
    auto loaded = config::parse_config(R"(
interfaces: { lan0: { zone: trust } }
zones: { trust: {} }
nat:
  pools:
    mixed: { addresses: [198.18.100.5, 198.18.100.16/28, 198.18.100.40-198.18.100.44, "2001:2:0:200::/112"]}
)",
                                       "t.yaml");
    ASSERT_TRUE(loaded.ok()) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
    json pool = json(nat_state(loaded.config->nat))["pools"][0];
    EXPECT_EQ(pool["addresses"],
              json::array({"198.18.100.5", "198.18.100.16/28", "198.18.100.40-198.18.100.44", "2001:2:0:200::/112"}));
    EXPECT_EQ(pool["ranges"][1]["last"], "198.18.100.31");
    EXPECT_EQ(pool["ranges"][3]["family"], "ipv6");
}

TEST(AcceptLocal, OnlyConfigsThatTranslate) {
    config::Nat nat;
    EXPECT_FALSE(config_has_nat(nat));
    nat.pools.push_back({});  // a pool alone translates nothing
    EXPECT_FALSE(config_has_nat(nat));
    nat.static_rules.push_back({});
    EXPECT_TRUE(config_has_nat(nat));
}

TEST(AcceptLocal, WritesOneAndReportsFailures) {
    auto root = std::filesystem::temp_directory_path() / ("sluice-accept-local-" + std::to_string(getpid()));
    std::filesystem::create_directories(root / "net/ipv4/conf/lan0");
    std::ofstream(root / "net/ipv4/conf/lan0/accept_local") << "0\n";
    auto failures = enable_accept_local_all({"lan0", "missing0"}, root.string());
    std::ifstream in(root / "net/ipv4/conf/lan0/accept_local");
    std::string value;
    std::getline(in, value);
    EXPECT_EQ(value, "1");
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_NE(failures[0].find("missing0"), std::string::npos);
    std::filesystem::remove_all(root);
}
