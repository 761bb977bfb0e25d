// 802.1Q ingress and the IPv6 extension-header walk.
#include "datapath_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40000;

class VlanTest : public DatapathTest {};

// lan0.100 is bound to zone trust: tagged frames on lan0 with vid 100 are trust
// traffic. The egress (wan0) is untagged, so the datapath pops the tag
// (bpf/forward.bpf.h: vlan_pop) and the output is the plain forwarded frame.
TEST_F(VlanTest, TaggedSynOnBoundVlanIsRedirectedUntagged) {
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1000).syn().build(); };
    Bytes in = syn(std::move(PacketBuilder().eth(kLanHostMac, lan_mac()).vlan(100).ipv4(kLanHost4, kWanHost4).ttl(64)));
    expect_fixture({"IPv4 SYN tagged vid 100 on lan0", in, lan_if(), XDP_REDIRECT, syn(lan_to_wan4_out())});
    EXPECT_TRUE(session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp));
}

TEST_F(VlanTest, Tagged6SynOnBoundVlanIsRedirectedUntagged) {
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1000).syn().build(); };
    Bytes in = syn(std::move(
        PacketBuilder().eth(kLanHostMac, lan_mac()).vlan(100).ipv6(kLanHost6, kWanHost6).hop_limit(64)));
    expect_fixture({"IPv6 SYN tagged vid 100 on lan0", in, lan_if(), XDP_REDIRECT, syn(lan_to_wan6_out())});
}

TEST_F(VlanTest, TagOfUnboundVlanIsLeftToTheKernel) {
    Bytes in = PacketBuilder().eth(kLanHostMac, lan_mac()).vlan(200).ipv4(kLanHost4, kWanHost4)
                   .tcp(kClientPort, 80).syn().build();
    expect_fixture({"IPv4 SYN tagged vid 200 (no zone)", in, lan_if(), XDP_PASS, in});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_UNZONED));
}

TEST_F(VlanTest, DoubleTaggedIsDroppedAsTooDeep) {
    Bytes in = PacketBuilder().eth(kLanHostMac, lan_mac()).vlan(100, 0, 0x88a8).vlan(100).ipv4(kLanHost4, kWanHost4)
                   .tcp(kClientPort, 80).syn().build();
    expect_fixture({"IPv4 SYN QinQ", in, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_VLAN_TOO_DEEP));
}

// ---- IPv6 extension headers before a SYN to a permitted port

struct ExtCase {
    const char* name;
    void (*add)(PacketBuilder&);
};
// Names the case in test listings (ctest names) instead of its bytes.
void PrintTo(const ExtCase& c, std::ostream* os) { *os << c.name; }


class Ipv6ExtTest : public DatapathTest, public ::testing::WithParamInterface<ExtCase> {};

TEST_P(Ipv6ExtTest, SynBehindExtensionHeadersIsRedirected) {
    auto syn = [&](PacketBuilder b) {
        GetParam().add(b);
        return b.tcp(kClientPort, 80).seq(1000).syn().build();
    };
    auto r = expect_fixture({std::string("IPv6 SYN behind ") + GetParam().name, syn(lan_to_wan6()), lan_if(),
                             XDP_REDIRECT, syn(lan_to_wan6_out())});
    EXPECT_TRUE(session6(kLanHost6, kWanHost6, kClientPort, 80, proto::kTcp));
    auto report = verify_checksums(r.output);
    EXPECT_TRUE(report.ok()) << report.describe();
}

INSTANTIATE_TEST_SUITE_P(
    Headers, Ipv6ExtTest,
    ::testing::Values(
        ExtCase{"hop_by_hop", [](PacketBuilder& b) { b.hop_by_hop(); }},
        ExtCase{"hop_by_hop_router_alert", [](PacketBuilder& b) { b.hop_by_hop({5, 2, 0, 0}); }},
        ExtCase{"routing", [](PacketBuilder& b) { b.routing(); }},
        ExtCase{"destination_options", [](PacketBuilder& b) { b.destination_options(); }},
        ExtCase{"atomic_fragment", [](PacketBuilder& b) { b.fragment_header(0, false, 0x1234); }},
        ExtCase{"all_four", [](PacketBuilder& b) {
                    b.hop_by_hop().destination_options().routing().fragment_header(0, false, 7);
                }},
        ExtCase{"all_four_and_dest_opts", [](PacketBuilder& b) {
                    b.hop_by_hop().destination_options().routing().fragment_header(0, false, 7)
                        .destination_options();
                }}),
    [](const ::testing::TestParamInfo<ExtCase>& info) { return std::string(info.param.name); });

class Ipv6ExtLimitTest : public DatapathTest {};

TEST_F(Ipv6ExtLimitTest, ChainLongerThanTheBoundIsDropped) {
    auto b = lan_to_wan6();
    for (int i = 0; i < 12; ++i) b.destination_options();
    Bytes in = b.tcp(kClientPort, 80).syn().build();
    expect_fixture({"IPv6 SYN behind 12 destination-options headers", in, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_IPV6_EXT_TOO_MANY));
}

TEST_F(Ipv6ExtLimitTest, TruncatedExtensionHeaderIsDropped) {
    // Hop-by-hop claiming 88 bytes in a packet that has 8 + 20.
    Bytes in = lan_to_wan6().hop_by_hop().ext_length(10).tcp(kClientPort, 80).syn().build();
    expect_fixture({"IPv6 hop-by-hop longer than the packet", in, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_IPV6_EXT_TRUNCATED));
}

TEST_F(Ipv6ExtLimitTest, ExtensionHeaderCutByFrameEndIsDropped) {
    // The frame ends 4 bytes into a destination-options header.
    Bytes in = lan_to_wan6().destination_options().protocol(proto::kNoNext).payload_length(4).truncate(14 + 40 + 4)
                   .build();
    expect_fixture({"IPv6 destination options cut after 4 bytes", in, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_IPV6_EXT_TRUNCATED));
}

}  // namespace
}  // namespace sluice::test
