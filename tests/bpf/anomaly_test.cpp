// Anomalies no stack sends, each dropped under its own counter before any
// lookup: "land" (a packet from an address to itself) and a fragment that
// ends past 64 KiB ("ping of death"), IPv4 and IPv6. Impossible TCP flag
// sets are covered in malformed_test.cpp (drop-tcp-bad-flags).
#include "datapath_env.h"

namespace sluice::test {
namespace {

class AnomalyTest : public DatapathTest {};

TEST_F(AnomalyTest, LandIsDropped) {
    Bytes v4 = PacketBuilder().eth(kWanHostMac, wan_mac()).ipv4(kWanHost4, kWanHost4).tcp(80, 80).syn().build();
    expect_fixture({"IPv4 SYN from 198.18.100.200 to itself", v4, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_LAND));
    snapshot_stats();
    Bytes v6 = PacketBuilder().eth(kLanHostMac, lan_mac()).ipv6(kLanHost6, kLanHost6).udp(53, 53).build();
    expect_fixture({"IPv6 UDP from the LAN host to itself", v6, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_LAND));
}

TEST_F(AnomalyTest, FragmentPast64KiBIsDropped) {
    // Offset 65,528 + 16 bytes of data: the datagram would end at 65,544.
    Bytes v4 = lan_to_wan4().ip_id(9).frag_offset(65528).protocol(proto::kIcmp).payload_pattern(16).build();
    expect_fixture({"IPv4 fragment ending past 64 KiB", v4, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_OVERSIZE));
    snapshot_stats();
    Bytes v6 = lan_to_wan6().fragment_header(65528, false, 9).protocol(proto::kIcmpv6).payload_pattern(16).build();
    expect_fixture({"IPv6 fragment ending past 64 KiB", v6, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_OVERSIZE));
    // Ending exactly at 65,535 is still a datagram (then: no record, as
    // for any later fragment without its first).
    snapshot_stats();
    Bytes edge = lan_to_wan4().ip_id(10).frag_offset(65528).protocol(proto::kIcmp).payload_pattern(7).build();
    expect_fixture({"IPv4 fragment ending at 65,535", edge, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_NO_RECORD));
}

}  // namespace
}  // namespace sluice::test
