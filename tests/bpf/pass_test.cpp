// What the fast path leaves to the kernel (XDP_PASS, frame untouched): expiring
// TTL, traffic to the firewall itself, non-IP, interfaces without a zone.
#include "datapath_env.h"

namespace sluice::test {
namespace {

class PassTest : public DatapathTest {};

TEST_F(PassTest, Ipv4Ttl1OnPermittedFlowGoesToKernel) {
    Bytes syn = lan_to_wan4(1).tcp(40000, 80).syn().build();
    expect_fixture({"IPv4 SYN :80 with TTL 1", syn, lan_if(), XDP_PASS, syn});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_TTL));
}

TEST_F(PassTest, Ipv6HopLimit1OnPermittedFlowGoesToKernel) {
    Bytes syn = lan_to_wan6(1).tcp(40000, 80).syn().build();
    expect_fixture({"IPv6 SYN :80 with hop limit 1", syn, lan_if(), XDP_PASS, syn});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_TTL));
}

TEST_F(PassTest, Ipv4TtlExpiringOnEstablishedFlowGoesToKernel) {
    ASSERT_EQ(run(lan_to_wan4().tcp(40000, 80).seq(1).syn().build(), lan_if()).retval, XDP_REDIRECT);
    snapshot_stats();
    Bytes syn_again = lan_to_wan4(1).tcp(40000, 80).seq(1).syn().build();
    expect_fixture({"IPv4 retransmitted SYN with TTL 1", syn_again, lan_if(), XDP_PASS, syn_again});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_TTL));
}

TEST_F(PassTest, Ipv4ToFirewallAddressGoesToKernel) {
    Bytes syn = PacketBuilder().eth(kLanHostMac, lan_mac()).ipv4(kLanHost4, kLanFw4).tcp(40000, 22).syn().build();
    expect_fixture({"IPv4 SYN to 198.18.1.1:22", syn, lan_if(), XDP_PASS, syn});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_LOCAL));
}

TEST_F(PassTest, Ipv6ToFirewallAddressGoesToKernel) {
    Bytes ping = PacketBuilder().eth(kLanHostMac, lan_mac()).ipv6(kLanHost6, kLanFw6).icmpv6_echo_request(1, 1).build();
    expect_fixture({"IPv6 echo to 2001:2:0:1::1", ping, lan_if(), XDP_PASS, ping});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_LOCAL));
}

TEST_F(PassTest, ArpGoesToKernel) {
    Bytes arp = PacketBuilder()
                    .eth(kLanHostMac, Mac::parse("ff:ff:ff:ff:ff:ff"))
                    .arp_request(kLanHostMac, kLanHost4, kLanFw4)
                    .build();
    expect_fixture({"ARP who-has 198.18.1.1", arp, lan_if(), XDP_PASS, arp});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_NON_IP));
}

TEST_F(PassTest, InterfaceWithoutZoneGoesToKernel) {
    // lan0p exists in the namespace but the config does not bind it.
    auto unbound = env_->ns().interface("lan0p");
    ASSERT_TRUE(unbound.ok()) << unbound.error().message;
    Bytes syn = lan_to_wan4().tcp(40000, 80).syn().build();
    expect_fixture({"IPv4 SYN arriving on unbound lan0p", syn, unbound.value().ifindex, XDP_PASS, syn});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_UNZONED));
}

}  // namespace
}  // namespace sluice::test
