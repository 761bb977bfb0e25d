// Pool capacity and the reservations counted against pools and interface
// addresses.
#include <gtest/gtest.h>
#include <netinet/in.h>

#include "cli/nat_usage.h"
#include "nat_test_entries.h"

using namespace sluice;
using namespace sluice::cli;
using namespace sluice::test_nat;
using nlohmann::json;

namespace {

json pool_state() {
    return {{"name", "public"},
            {"index", 0},
            {"addresses", {"198.18.100.10-198.18.100.20", "2001:2:0:200::/64"}},
            {"ranges",
             {{{"family", "ipv4"}, {"first", "198.18.100.10"}, {"last", "198.18.100.20"}},
              {{"family", "ipv6"}, {"first", "2001:2:0:200::"}, {"last", "2001:2:0:200:ffff:ffff:ffff:ffff"}}}},
            {"port_first", 1024},
            {"port_last", 65535},
            {"persistent", true}};
}

NatReservation held(const char* addr, uint16_t port, uint8_t protocol) {
    Tuple t = tuple4(addr, port, "198.18.100.200", 80);
    return reservation(t, tuple4("198.18.1.10", 40000, "198.18.100.200", 80), protocol, 0);
}

}  // namespace

TEST(NatUsage, Ipv4PoolCapacityIsAddressesTimesPorts) {
    json p = pool_state();
    p["ranges"].erase(1);
    PoolSpec spec = pool_spec_from_state(p);
    EXPECT_EQ(pool_address_count(spec), 11u);
    EXPECT_EQ(pool_capacity(spec), 11u * 64512u);
}

TEST(NatUsage, HugeIpv6RangesSaturate) {
    PoolSpec spec = pool_spec_from_state(pool_state());
    EXPECT_EQ(pool_address_count(spec), UINT64_MAX);
    EXPECT_EQ(pool_capacity(spec), UINT64_MAX);
}

TEST(NatUsage, SmallIpv6RangeCountsUp) {
    json p = pool_state();
    p["ranges"] = {{{"family", "ipv6"}, {"first", "2001:2:0:200::fffe"}, {"last", "2001:2:0:200::1:1"}}};
    EXPECT_EQ(pool_address_count(pool_spec_from_state(p)), 4u);
}

TEST(NatUsage, ReservationsInsideThePoolRangesOnly) {
    PoolSpec spec = pool_spec_from_state(pool_state());
    EXPECT_TRUE(reservation_in_pool(held("198.18.100.10", 2000, IPPROTO_TCP).first, spec));
    EXPECT_TRUE(reservation_in_pool(held("198.18.100.20", 2000, IPPROTO_TCP).first, spec));
    EXPECT_FALSE(reservation_in_pool(held("198.18.100.21", 2000, IPPROTO_TCP).first, spec));
    EXPECT_FALSE(reservation_in_pool(held("198.18.100.1", 2000, IPPROTO_TCP).first, spec));
    NatReservation v6 = reservation(tuple6("2001:2:0:200::5", 3000, "2001:2:0:100::200", 80),
                                    tuple6("2001:2:0:1::10", 3000, "2001:2:0:100::200", 80), IPPROTO_UDP, 0);
    EXPECT_TRUE(reservation_in_pool(v6.first, spec));
}

TEST(NatUsage, PoolUsagePerProtocol) {
    std::vector<NatReservation> r = {held("198.18.100.10", 2000, IPPROTO_TCP), held("198.18.100.11", 2000, IPPROTO_TCP),
                                     held("198.18.100.12", 2000, IPPROTO_UDP), held("198.18.100.12", 2001, IPPROTO_ICMP),
                                     held("198.18.100.1", 2000, IPPROTO_TCP)};
    json u = pool_usage_json(pool_state(), r);
    EXPECT_EQ(u["name"], "public");
    EXPECT_EQ(u["port_first"], 1024);
    EXPECT_EQ(u["port_last"], 65535);
    EXPECT_EQ(u["persistent"], true);
    EXPECT_EQ(u["addresses"][0], "198.18.100.10-198.18.100.20");
    EXPECT_EQ(u["in_use"], (json{{"tcp", 2}, {"udp", 1}, {"icmp", 1}, {"icmpv6", 0}, {"total", 4}}));
}

TEST(NatUsage, MixedPoolFillsPerFamily) {
    NatReservation v6 = reservation(tuple6("2001:2:0:200::5", 3000, "2001:2:0:100::200", 80),
                                    tuple6("2001:2:0:1::10", 3000, "2001:2:0:100::200", 80), IPPROTO_TCP, 0);
    json u = pool_usage_json(pool_state(), {held("198.18.100.10", 2000, IPPROTO_TCP), v6});
    EXPECT_EQ(u["in_use"]["tcp"], 2);
    ASSERT_TRUE(u["by_family"].contains("ipv4"));
    ASSERT_TRUE(u["by_family"].contains("ipv6"));
    EXPECT_EQ(u["by_family"]["ipv4"]["address_count"], 11);
    EXPECT_EQ(u["by_family"]["ipv4"]["capacity_per_protocol"], 11 * 64512);
    EXPECT_EQ(u["by_family"]["ipv4"]["in_use"]["tcp"], 1);
    EXPECT_EQ(u["by_family"]["ipv6"]["address_count"], UINT64_MAX);
    EXPECT_EQ(u["by_family"]["ipv6"]["in_use"]["tcp"], 1);
}
