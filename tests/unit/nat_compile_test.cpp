// The NAT map entries the compiler emits (maps/nat.h), checked field by field:
// the docs/config.md example, source-rule bit propagation through the LPM tables,
// families a rule takes part in, and pool slots.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "compiler_test_util.h"

using namespace sluice;
using namespace sluice::test;

namespace {

const std::string kZones =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust }, wan0.100: { zone: dmz } }\n"
    "zones: { trust: {}, untrust: {}, dmz: {} }\n";

// docs/config.md's nat section, with its address book.
const std::string kExample =
    kZones +
    "address-book: { lan-net: [198.18.1.0/24, \"2001:2:0:1::/64\"] }\n"
    "nat:\n"
    "  pools:\n"
    "    public: { addresses: [198.18.100.10-198.18.100.20], ports: 1024-65535, persistent: true }\n"
    "  source:\n"
    "    - { name: lan-out, from: trust, to: untrust, source: [lan-net], translate: interface }\n"
    "  destination:\n"
    "    - { name: web-in, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,\n"
    "        translate-to: { address: 198.18.1.100, port: 80 } }\n"
    "  static:\n"
    "    - { inside: 198.18.1.50, outside: 198.18.100.50 }\n"
    "  nptv6:\n"
    "    - { inside: \"2001:2:0:1::/64\", outside: \"2001:2:0:200::/64\" }\n";

bool same_bytes(const void* bytes, const std::string& addr, size_t n) {
    return std::memcmp(bytes, address(addr).data(), n) == 0;
}

// A prefix-map entry of rule 0 in generation 1: key `from`/length, value from → to.
template <typename Entry>
void expect_prefix_entry(const Entry& entry, int length, const std::string& from, const std::string& to,
                         nat_prefix_kind kind) {
    SCOPED_TRACE(from + "/" + std::to_string(length) + " -> " + to);
    const auto& [key, value] = entry;
    EXPECT_EQ(key.prefixlen, uint32_t(8 + length));
    EXPECT_EQ(key.generation, 1);
    EXPECT_TRUE(same_bytes(key.addr, from, sizeof key.addr));
    EXPECT_TRUE(same_bytes(value.from, from, 16));
    EXPECT_TRUE(same_bytes(value.to, to, 16));
    EXPECT_EQ(value.prefix_len, length);
    EXPECT_EQ(value.kind, kind);
    EXPECT_EQ(value.rule_id, 0u);
}

// The bits of the LPM entry for exactly prefix/length, or nullopt.
template <typename Table>
std::optional<uint64_t> lpm_bits(const Table& table, int length, const std::string& addr) {
    for (const auto& [key, value] : table)
        if (key.prefixlen == uint32_t(8 + length) && same_bytes(key.addr, addr, sizeof key.addr)) return value.bits;
    return std::nullopt;
}

// What the datapath computes for one flow: zone pair ∧ LPM(src) ∧ LPM(dst),
// by longest match over the compiled entries; the lowest bit wins.
template <typename Table>
uint64_t longest_match(const Table& table, const std::string& addr) {
    const auto bytes = address(addr);
    int best = -1;
    uint64_t bits = 0;
    for (const auto& [key, value] : table) {
        const int length = int(key.prefixlen) - 8;
        std::array<uint8_t, 16> prefix{};
        std::memcpy(prefix.data(), key.addr, sizeof key.addr);
        if (length > best && config::mask_address(bytes, length) == prefix) best = length, bits = value.bits;
    }
    return bits;
}

std::optional<uint32_t> source_rule_for(const CompiledNat& nat, uint16_t from, uint16_t to, const std::string& src,
                                        const std::string& dst) {
    uint64_t zones = 0;
    for (const auto& [key, value] : nat.source_zones)
        if (key.from_zone == from && key.to_zone == to) zones = value.bits;
    const bool v4 = src.find(':') == std::string::npos;
    uint64_t bits = zones & (v4 ? longest_match(nat.source_saddr_v4, src) : longest_match(nat.source_saddr_v6, src)) &
                    (v4 ? longest_match(nat.source_daddr_v4, dst) : longest_match(nat.source_daddr_v6, dst));
    if (!bits) return std::nullopt;
    return static_cast<uint32_t>(__builtin_ctzll(bits));
}

}  // namespace

TEST(NatCompiler, ExampleDestinationRule) {
    const CompiledNat nat = compile_text(kExample, 1).nat;
    EXPECT_EQ(nat.generation, 1);
    ASSERT_EQ(nat.destination.size(), 1u);
    const auto& [key, value] = nat.destination[0];
    EXPECT_TRUE(same_bytes(key.addr, "198.18.100.1", 16));
    EXPECT_EQ(key.port, htons(8080));
    EXPECT_EQ(key.zone_in, 2);
    EXPECT_EQ(key.protocol, 6);
    EXPECT_EQ(key.family, SLUICE_FAMILY_IPV4);
    EXPECT_EQ(key.generation, 1);
    EXPECT_EQ(key.pad, 0);
    EXPECT_TRUE(same_bytes(value.addr, "198.18.1.100", 16));
    EXPECT_EQ(value.port, htons(80));
    EXPECT_EQ(value.rule_id, 0u);
}

TEST(NatCompiler, ExampleStaticAndNptv6Prefixes) {
    const CompiledNat nat = compile_text(kExample, 1).nat;
    ASSERT_EQ(nat.map_in_v4.size(), 1u);
    ASSERT_EQ(nat.map_out_v4.size(), 1u);
    ASSERT_EQ(nat.map_in_v6.size(), 1u);
    ASSERT_EQ(nat.map_out_v6.size(), 1u);
    // Arriving for an outside address: keyed by outside, replaced by inside.
    expect_prefix_entry(nat.map_in_v4[0], 32, "198.18.100.50", "198.18.1.50", NAT_PREFIX_STATIC);
    expect_prefix_entry(nat.map_out_v4[0], 32, "198.18.1.50", "198.18.100.50", NAT_PREFIX_STATIC);
    expect_prefix_entry(nat.map_in_v6[0], 64, "2001:2:0:200::", "2001:2:0:1::", NAT_PREFIX_NPTV6);
    expect_prefix_entry(nat.map_out_v6[0], 64, "2001:2:0:1::", "2001:2:0:200::", NAT_PREFIX_NPTV6);
}

TEST(NatCompiler, ExampleSourceRuleTables) {
    const CompiledNat nat = compile_text(kExample, 0).nat;
    ASSERT_EQ(nat.source_zones.size(), 1u);
    EXPECT_EQ(nat.source_zones[0].first.from_zone, 1);
    EXPECT_EQ(nat.source_zones[0].first.to_zone, 2);
    EXPECT_EQ(nat.source_zones[0].first.generation, 0);
    EXPECT_EQ(nat.source_zones[0].second.bits, 1u);

    ASSERT_EQ(nat.source_saddr_v4.size(), 2u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 0, "0.0.0.0"), 0u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 24, "198.18.1.0"), 1u);
    ASSERT_EQ(nat.source_saddr_v6.size(), 2u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v6, 0, "::"), 0u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v6, 64, "2001:2:0:1::"), 1u);
    // No destination: the rule is in the /0 entry of both families.
    ASSERT_EQ(nat.source_daddr_v4.size(), 1u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v4, 0, "0.0.0.0"), 1u);
    ASSERT_EQ(nat.source_daddr_v6.size(), 1u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v6, 0, "::"), 1u);

    ASSERT_EQ(nat.source_rules.size(), size_t{NAT_MAX_SOURCE_RULES});
    EXPECT_EQ(nat.source_rules[0].rule_id, 0u);
    EXPECT_EQ(nat.source_rules[0].kind, NAT_SOURCE_INTERFACE);
    EXPECT_EQ(nat.source_rules[0].pool_index, 0);
    for (size_t i = 1; i < nat.source_rules.size(); ++i) EXPECT_EQ(nat.source_rules[i].kind, 0) << i;
}

TEST(NatCompiler, ExamplePool) {
    const CompiledNat nat = compile_text(kExample).nat;
    ASSERT_EQ(nat.pools.size(), size_t{NAT_POOL_SLOTS});
    const nat_pool& v4 = nat.pools[0];
    EXPECT_EQ(v4.address_count, 11u);
    EXPECT_TRUE(same_bytes(v4.ranges[0].first, "198.18.100.10", 16));
    EXPECT_EQ(v4.ranges[0].count, 11u);
    EXPECT_EQ(v4.ranges[1].count, 0u);
    EXPECT_EQ(v4.port_first, 1024);
    EXPECT_EQ(v4.port_last, 65535);
    EXPECT_EQ(v4.family, SLUICE_FAMILY_IPV4);
    EXPECT_EQ(v4.flags, NAT_POOL_PERSISTENT);
    EXPECT_EQ(v4.pool_index, 0);
    for (size_t slot = 1; slot < nat.pools.size(); ++slot) EXPECT_EQ(nat.pools[slot].address_count, 0u) << slot;
}

TEST(NatCompiler, NoNatLeavesEveryTableEmpty) {
    const CompiledNat nat = compile_text(kZones).nat;
    EXPECT_TRUE(nat.destination.empty());
    EXPECT_TRUE(nat.map_in_v4.empty() && nat.map_out_v4.empty() && nat.map_in_v6.empty() && nat.map_out_v6.empty());
    EXPECT_TRUE(nat.source_zones.empty());
    EXPECT_TRUE(nat.source_saddr_v4.empty() && nat.source_saddr_v6.empty());
    EXPECT_TRUE(nat.source_daddr_v4.empty() && nat.source_daddr_v6.empty());
    // Array maps: every slot of the generation, zero, so stale rules and pools are overwritten.
    ASSERT_EQ(nat.source_rules.size(), size_t{NAT_MAX_SOURCE_RULES});
    for (const auto& rule : nat.source_rules) EXPECT_EQ(rule.kind, 0);
    ASSERT_EQ(nat.pools.size(), size_t{NAT_POOL_SLOTS});
    for (const auto& pool : nat.pools) EXPECT_EQ(pool.address_count, 0u);
}

TEST(NatCompiler, SourceBitsPropagateToLongerPrefixes) {
    const CompiledNat nat =
        compile_text(kZones +
                     "address-book: { wide: [198.18.0.0/16], narrow: [198.18.1.0/24, \"2001:2::/48\"] }\n"
                     "nat:\n"
                     "  source:\n"
                     "    - { name: a, from: trust, to: untrust, source: wide, translate: interface }\n"
                     "    - { name: b, from: trust, to: untrust, source: narrow, translate: interface }\n"
                     "    - { name: c, from: trust, to: untrust, translate: interface }\n"
                     "    - { name: d, from: trust, to: dmz, source: 198.18.1.128/25,\n"
                     "        destination: 198.18.100.0/24, translate: interface }\n")
            .nat;
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 0, "0.0.0.0"), 0b0100u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 16, "198.18.0.0"), 0b0101u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 24, "198.18.1.0"), 0b0111u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 25, "198.18.1.128"), 0b1111u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v6, 0, "::"), 0b0100u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v6, 48, "2001:2::"), 0b0110u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v4, 0, "0.0.0.0"), 0b0111u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v4, 24, "198.18.100.0"), 0b1111u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v6, 0, "::"), 0b0111u);

    // Whole lookups, as the datapath does them: the first matching rule wins.
    EXPECT_EQ(source_rule_for(nat, 1, 2, "198.18.1.7", "198.19.200.1"), 0u);
    EXPECT_EQ(source_rule_for(nat, 1, 2, "198.19.1.1", "198.19.200.1"), 2u);
    EXPECT_EQ(source_rule_for(nat, 1, 2, "2001:2::5", "2001:2:0:300::1"), 1u);
    EXPECT_EQ(source_rule_for(nat, 1, 3, "198.18.1.200", "198.18.100.9"), 3u);
    EXPECT_EQ(source_rule_for(nat, 1, 3, "198.18.1.7", "198.18.100.9"), std::nullopt);
    EXPECT_EQ(source_rule_for(nat, 2, 1, "198.18.1.7", "198.18.100.9"), std::nullopt);
}

TEST(NatCompiler, PoolRuleTakesPartOnlyInItsPoolsFamilies) {
    const CompiledNat nat =
        compile_text(kZones +
                     "address-book: { lan-net: [198.18.1.0/24, \"2001:2:0:1::/64\"] }\n"
                     "nat:\n"
                     "  pools: { v4: { addresses: 198.18.100.10 }, v6: { addresses: \"2001:2:0:100::10\" } }\n"
                     "  source:\n"
                     "    - { name: a, from: trust, to: untrust, source: lan-net, translate: { pool: v4 } }\n"
                     "    - { name: b, from: trust, to: untrust, translate: { pool: v6 } }\n"
                     "    - { name: c, from: trust, to: untrust, translate: interface }\n")
            .nat;
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 24, "198.18.1.0"), 0b101u);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v4, 0, "0.0.0.0"), 0b100u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v4, 0, "0.0.0.0"), 0b101u);
    // Rule a is absent from IPv6: not even its IPv6 source prefix has an entry.
    EXPECT_EQ(lpm_bits(nat.source_saddr_v6, 64, "2001:2:0:1::"), std::nullopt);
    EXPECT_EQ(lpm_bits(nat.source_saddr_v6, 0, "::"), 0b110u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v6, 0, "::"), 0b110u);
    EXPECT_EQ(nat.source_rules[0].kind, NAT_SOURCE_POOL);
    EXPECT_EQ(nat.source_rules[0].pool_index, 0);
    EXPECT_EQ(nat.source_rules[1].kind, NAT_SOURCE_POOL);
    EXPECT_EQ(nat.source_rules[1].pool_index, 1);
    EXPECT_EQ(nat.source_rules[1].rule_id, 1u);
    EXPECT_EQ(nat.source_rules[2].kind, NAT_SOURCE_INTERFACE);
    EXPECT_EQ(source_rule_for(nat, 1, 2, "2001:2:0:1::5", "2001:2:0:300::1"), 1u);
    EXPECT_EQ(source_rule_for(nat, 1, 2, "198.18.1.5", "198.19.200.1"), 0u);
}

TEST(NatCompiler, PoolSlotsPerPoolAndFamily) {
    const CompiledNat nat =
        compile_text(kZones +
                         "nat:\n"
                         "  pools:\n"
                         "    first: { addresses: 198.18.100.1 }\n"
                         "    mixed: { addresses: [198.18.100.10-198.18.100.20, \"2001:2:0:100::/97\",\n"
                         "                         198.18.100.30, \"2001:2:0:101::8-2001:2:0:101::f\"],\n"
                         "             ports: 2000-2999 }\n",
                     1)
            .nat;
    ASSERT_EQ(nat.pools.size(), size_t{NAT_POOL_SLOTS});
    EXPECT_EQ(nat.pools[0].address_count, 1u);
    EXPECT_EQ(nat.pools[0].pool_index, 0);
    EXPECT_EQ(nat.pools[1].address_count, 0u);

    const nat_pool& v4 = nat.pools[2];  // pool 1, IPv4
    EXPECT_EQ(v4.pool_index, 1);
    EXPECT_EQ(v4.family, SLUICE_FAMILY_IPV4);
    EXPECT_EQ(v4.flags, 0);
    EXPECT_EQ(v4.port_first, 2000);
    EXPECT_EQ(v4.port_last, 2999);
    EXPECT_EQ(v4.address_count, 12u);
    EXPECT_TRUE(same_bytes(v4.ranges[0].first, "198.18.100.10", 16));
    EXPECT_EQ(v4.ranges[0].count, 11u);
    EXPECT_TRUE(same_bytes(v4.ranges[1].first, "198.18.100.30", 16));
    EXPECT_EQ(v4.ranges[1].count, 1u);
    EXPECT_EQ(v4.ranges[2].count, 0u);

    const nat_pool& v6 = nat.pools[3];  // pool 1, IPv6: a prefix is its whole range
    EXPECT_EQ(v6.pool_index, 1);
    EXPECT_EQ(v6.family, SLUICE_FAMILY_IPV6);
    EXPECT_EQ(v6.port_first, 2000);
    EXPECT_TRUE(same_bytes(v6.ranges[0].first, "2001:2:0:100::", 16));
    EXPECT_EQ(v6.ranges[0].count, 0x80000000u);
    EXPECT_TRUE(same_bytes(v6.ranges[1].first, "2001:2:0:101::8", 16));
    EXPECT_EQ(v6.ranges[1].count, 8u);
    EXPECT_EQ(v6.address_count, 0x80000008u);
    EXPECT_EQ(nat.pools[4].address_count, 0u);
}

TEST(NatCompiler, GoodBasicCompiles) {
    auto loaded = config::read_config_file(SLUICE_TEST_DATA_DIR "/configs/good-basic.yaml");
    ASSERT_TRUE(loaded.ok());
    auto compiled = compiler::compile(*loaded.config, 0);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    const CompiledNat& nat = compiled->nat;
    EXPECT_EQ(nat.destination.size(), 1u);
    // lan-pool (bit 1, trust → dmz, pool "public" of IPv4 only) is in the IPv4 tables only.
    EXPECT_EQ(lpm_bits(nat.source_daddr_v4, 0, "0.0.0.0"), 0b11u);
    EXPECT_EQ(lpm_bits(nat.source_daddr_v6, 0, "::"), 0b01u);
    EXPECT_EQ(nat.source_rules[1].kind, NAT_SOURCE_POOL);
}
