// The loader's NAT tables in real maps: Datapath::apply writes a config's NAT
// entries into the generation it flips to, and a later config (with other
// NAT rules, or none) leaves no entry of an earlier one in the generation it
// makes active.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>

#include "compiler/compile.h"
#include "config/load_config.h"
#include "loader/datapath.h"
#include "loader/map_io.h"
#include "netns_fixture.h"

using namespace sluice;
using namespace sluice::test;

namespace {

const std::string kBase =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }\n"
    "zones: { trust: {}, untrust: {} }\n"
    "address-book: { lan-net: [198.18.1.0/24, \"2001:2:0:1::/64\"] }\n";

const std::string kNatA =
    kBase +
    "nat:\n"
    "  pools: { public: { addresses: 198.18.100.10-198.18.100.20, persistent: true } }\n"
    "  source:\n"
    "    - { name: out, from: trust, to: untrust, source: lan-net, translate: { pool: public } }\n"
    "  destination:\n"
    "    - { name: web, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,\n"
    "        translate-to: { address: 198.18.1.100, port: 80 } }\n"
    "  static: [ { inside: 198.18.1.50, outside: 198.18.100.50 } ]\n"
    "  nptv6: [ { inside: \"2001:2:0:1::/64\", outside: \"2001:2:0:200::/64\" } ]\n";

const std::string kNatB = kBase +
                          "nat:\n"
                          "  source: [ { name: if, from: trust, to: untrust, translate: interface } ]\n"
                          "  destination:\n"
                          "    - { name: dns, from: untrust, destination: 198.18.100.2, protocol: udp, port: 53,\n"
                          "        translate-to: { address: 198.18.1.53 } }\n";

std::array<uint8_t, 16> addr(const std::string& text) {
    return config::parse_address(text).value().addr;
}

class NatTablesTest : public ::testing::Test {
protected:
    void SetUp() override {
        SLUICE_SKIP_WITHOUT_BPF();
        auto ns = NetnsFixture::create();
        ASSERT_TRUE(ns) << ns.error().message;
        ns_ = std::move(ns.value());
        auto dp = Datapath::open(DatapathOptions{});
        ASSERT_TRUE(dp) << dp.error().message;
        dp_ = std::move(dp.value());
    }
    void TearDown() override {
        dp_.reset();
        ns_.reset();
    }

    // Loads, compiles and applies a config the way the daemon does; returns
    // the generation it made active.
    uint8_t apply(const std::string& yaml) {
        auto parsed = config::parse_config(yaml, "nat-test.yaml");
        EXPECT_TRUE(parsed.ok());
        if (!parsed.ok()) return 0xff;
        auto compiled = compiler::compile(*parsed.config, dp_->inactive_generation());
        EXPECT_TRUE(compiled) << (compiled ? "" : compiled.error().message);
        auto interfaces = Datapath::resolve(compiled.value());
        EXPECT_TRUE(interfaces) << (interfaces ? "" : interfaces.error().message);
        Status s = dp_->apply(compiled.value(), interfaces.value());
        EXPECT_TRUE(s) << (s ? "" : s.error().message);
        runtime_config cfg{};
        EXPECT_TRUE(read_runtime_config(fd(SLUICE_MAP_RUNTIME_CONFIG), cfg));
        return cfg.policy_generation;
    }

    int fd(const char* name) const { return dp_->map_fd(name); }

    // Keys of one generation in a generation-keyed map.
    template <typename Key>
    std::vector<Key> keys_of(const char* map, uint8_t gen) const {
        std::vector<Key> out;
        for (const Key& key : map_keys<Key>(fd(map)))
            if (key.generation == gen) out.push_back(key);
        return out;
    }

    // Longest-prefix lookup of one address, as the datapath does it.
    template <typename Key, typename Value>
    std::optional<Value> lookup(const char* map, uint8_t gen, const std::string& address) const {
        Key key;
        std::memset(&key, 0, sizeof key);
        key.prefixlen = 8 + 8 * sizeof key.addr;
        key.generation = gen;
        std::memcpy(key.addr, addr(address).data(), sizeof key.addr);
        Value value;
        if (bpf_map_lookup_elem(fd(map), &key, &value) != 0) return std::nullopt;
        return value;
    }

    template <typename Value>
    Value array_slot(const char* map, uint32_t index) const {
        Value value;
        std::memset(&value, 0, sizeof value);
        EXPECT_EQ(bpf_map_lookup_elem(fd(map), &index, &value), 0) << map << "[" << index << "]";
        return value;
    }

    std::unique_ptr<NetnsFixture> ns_;
    std::unique_ptr<Datapath> dp_;
};

}  // namespace

TEST_F(NatTablesTest, ApplyWritesTheActiveGeneration) {
    const uint8_t gen = apply(kNatA);

    auto dst = keys_of<nat_dst_key>(SLUICE_MAP_NAT_DST, gen);
    ASSERT_EQ(dst.size(), 1u);
    EXPECT_EQ(std::memcmp(dst[0].addr, addr("198.18.100.1").data(), 16), 0);
    EXPECT_EQ(dst[0].port, htons(8080));
    nat_dst_value value{};
    ASSERT_EQ(bpf_map_lookup_elem(fd(SLUICE_MAP_NAT_DST), &dst[0], &value), 0);
    EXPECT_EQ(std::memcmp(value.addr, addr("198.18.1.100").data(), 16), 0);
    EXPECT_EQ(value.port, htons(80));

    // The LPM maps answer a longest-prefix lookup of an address in the prefix.
    auto in4 = lookup<policy_lpm_key_v4, nat_prefix_value>(SLUICE_MAP_NAT_MAP_IN_V4, gen, "198.18.100.50");
    ASSERT_TRUE(in4);
    EXPECT_EQ(std::memcmp(in4->to, addr("198.18.1.50").data(), 4), 0);
    EXPECT_EQ(in4->kind, NAT_PREFIX_STATIC);
    auto out6 = lookup<policy_lpm_key_v6, nat_prefix_value>(SLUICE_MAP_NAT_MAP_OUT_V6, gen, "2001:2:0:1::42");
    ASSERT_TRUE(out6);
    EXPECT_EQ(std::memcmp(out6->to, addr("2001:2:0:200::").data(), 16), 0);
    EXPECT_EQ(out6->kind, NAT_PREFIX_NPTV6);
    auto bits = lookup<policy_lpm_key_v4, nat_rule_bits>(SLUICE_MAP_NAT_SRC_SADDR_V4, gen, "198.18.1.7");
    ASSERT_TRUE(bits);
    EXPECT_EQ(bits->bits, 1u);
    EXPECT_EQ(keys_of<policy_zone_pair_key>(SLUICE_MAP_NAT_SRC_ZONES, gen).size(), 1u);

    auto rule = array_slot<nat_source_rule>(SLUICE_MAP_NAT_SRC_RULES, gen * NAT_MAX_SOURCE_RULES);
    EXPECT_EQ(rule.kind, NAT_SOURCE_POOL);
    auto pool = array_slot<nat_pool>(SLUICE_MAP_NAT_POOLS, gen * NAT_POOL_SLOTS);
    EXPECT_EQ(pool.address_count, 11u);
    EXPECT_EQ(pool.flags, NAT_POOL_PERSISTENT);
}

TEST_F(NatTablesTest, LaterConfigsLeaveNothingOfEarlierOnes) {
    const uint8_t first = apply(kNatA);
    const uint8_t second = apply(kBase);  // no nat section
    ASSERT_NE(first, second);
    EXPECT_TRUE(keys_of<nat_dst_key>(SLUICE_MAP_NAT_DST, second).empty());
    EXPECT_TRUE(keys_of<policy_lpm_key_v4>(SLUICE_MAP_NAT_MAP_IN_V4, second).empty());
    EXPECT_TRUE(keys_of<policy_lpm_key_v6>(SLUICE_MAP_NAT_MAP_OUT_V6, second).empty());
    EXPECT_TRUE(keys_of<policy_zone_pair_key>(SLUICE_MAP_NAT_SRC_ZONES, second).empty());
    EXPECT_TRUE(keys_of<policy_lpm_key_v4>(SLUICE_MAP_NAT_SRC_SADDR_V4, second).empty());
    EXPECT_EQ(array_slot<nat_source_rule>(SLUICE_MAP_NAT_SRC_RULES, second * NAT_MAX_SOURCE_RULES).kind, 0);
    EXPECT_EQ(array_slot<nat_pool>(SLUICE_MAP_NAT_POOLS, second * NAT_POOL_SLOTS).address_count, 0u);

    // Back in the first generation with other rules: only the new ones are there.
    ASSERT_EQ(apply(kNatB), first);
    auto dst = keys_of<nat_dst_key>(SLUICE_MAP_NAT_DST, first);
    ASSERT_EQ(dst.size(), 1u);
    EXPECT_EQ(std::memcmp(dst[0].addr, addr("198.18.100.2").data(), 16), 0);
    EXPECT_TRUE(keys_of<policy_lpm_key_v4>(SLUICE_MAP_NAT_MAP_IN_V4, first).empty());
    EXPECT_TRUE(keys_of<policy_lpm_key_v6>(SLUICE_MAP_NAT_MAP_OUT_V6, first).empty());
    // Rule "if" has no source: only the /0 entry, holding its bit.
    auto sources = keys_of<policy_lpm_key_v4>(SLUICE_MAP_NAT_SRC_SADDR_V4, first);
    ASSERT_EQ(sources.size(), 1u);
    EXPECT_EQ(sources[0].prefixlen, 8u);
    EXPECT_EQ(array_slot<nat_source_rule>(SLUICE_MAP_NAT_SRC_RULES, first * NAT_MAX_SOURCE_RULES).kind,
              NAT_SOURCE_INTERFACE);
    EXPECT_EQ(array_slot<nat_pool>(SLUICE_MAP_NAT_POOLS, first * NAT_POOL_SLOTS).address_count, 0u);
}
