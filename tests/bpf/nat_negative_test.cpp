// What must not be translated, and translations that cannot be made: no
// address for interface source NAT, flows no rule matches (source,
// destination, zone pair, inactive generation), flows policy refuses (no
// port taken), and a translated tuple another flow already holds.
#include "nat_env.h"

namespace sluice::test {
namespace {

class NatNegativeTest : public NatTest {
protected:
    // The plain forward of a LAN → WAN DNS query from `src`.
    void expect_untouched(const std::string& what, bool v6, const std::string& src) {
        const std::string wan = wan_host(v6);
        expect_nat(what, from_lan(v6, src, wan).udp(41000, 53).payload_pattern(12).build(), lan_if(), XDP_REDIRECT,
                   to_wan(v6, src, wan).udp(41000, 53).payload_pattern(12).build());
        EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 0);
        EXPECT_EQ(nat_->reservations(), 0u);
        auto s = session(v6, src, wan, 41000, 53, proto::kUdp);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->nat.flags, 0);
        EXPECT_TRUE(session(v6, wan, src, 53, 41000, proto::kUdp)) << "plain reply entry";
    }
};

TEST_F(NatNegativeTest, InterfaceWithoutAddressDrops) {
    nat_->source_interface(0, trust_, untrust_);
    for (bool v6 : {false, true}) {
        snapshot_stats();
        expect_nat(v6 ? "IPv6, no nat_ifaddrs entry" : "IPv4, no nat_ifaddrs entry",
                   from_lan(v6, lan_host(v6), wan_host(v6)).udp(41000, 53).build(), lan_if(), XDP_DROP, std::nullopt);
        EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_NO_ADDRESS));
        EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 0);
    }
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 0u);
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V6)), 0u);
    EXPECT_EQ(nat_->reservations(), 0u);
}

TEST_F(NatNegativeTest, InterfaceWithoutAnAddressOfTheFlowsFamilyDrops) {
    nat_->source_interface(0, trust_, untrust_);
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(wan_addr(false)), std::nullopt, 20000, 29999);
    expect_nat("IPv6 flow, IPv4-only interface address",
               from_lan(true, lan_host(true), wan_host(true)).udp(41000, 53).build(), lan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_NO_ADDRESS));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V6)), 0u);
    // IPv4 still translates.
    auto r = expect_nat("IPv4 flow", from_lan(false, lan_host(false), wan_host(false)).udp(41000, 53).build(), lan_if(),
                        XDP_REDIRECT, std::nullopt);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, wan_addr(false));
}

TEST_F(NatNegativeTest, NoRuleMatchesTheSource) {
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(wan_addr(false)), Ipv6Addr::parse(wan_addr(true)), 20000, 29999);
    nat_->source_interface(
        0, trust_, untrust_,
        {NatPrefix::v4(Ipv4Addr::parse("198.18.1.128"), 25), NatPrefix::v6(Ipv6Addr::parse("2001:2:0:1:8000::"), 65)});
    expect_untouched("IPv4 source outside the rule's prefix", false, lan_host(false));
    expect_untouched("IPv6 source outside the rule's prefix", true, lan_host(true));
    // ... while a source inside it is translated.
    auto r = expect_nat("inside the prefix", from_lan(false, "198.18.1.200", wan_host(false)).udp(41000, 53).build(),
                        lan_if(), XDP_REDIRECT, std::nullopt);
    EXPECT_EQ(parse_frame(r.output)->src_ip, wan_addr(false));
}

TEST_F(NatNegativeTest, NoRuleMatchesTheDestination) {
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(wan_addr(false)), Ipv6Addr::parse(wan_addr(true)), 20000, 29999);
    nat_->source_interface(
        0, trust_, untrust_, {NatPrefix::any4(), NatPrefix::any6()},
        {NatPrefix::v4(Ipv4Addr::parse("198.19.0.0"), 16), NatPrefix::v6(Ipv6Addr::parse("2001:2:0:f000::"), 52)});
    expect_untouched("IPv4 destination outside the rule's", false, lan_host(false));
    expect_untouched("IPv6 destination outside the rule's", true, lan_host(true));
}

TEST_F(NatNegativeTest, RuleOfAnotherZonePairDoesNotApply) {
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(wan_addr(false)), Ipv6Addr::parse(wan_addr(true)), 20000, 29999);
    nat_->source_interface(0, untrust_, trust_);
    expect_untouched("trust → untrust, rule is untrust → trust", false, lan_host(false));
}

// Rules written for the inactive generation are not in force.
TEST_F(NatNegativeTest, InactiveGenerationDoesNotApply) {
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(wan_addr(false)), Ipv6Addr::parse(wan_addr(true)), 20000, 29999);
    nat_->use_generation(nat_->generation() ^ 1);
    nat_->source_interface(0, trust_, untrust_);
    nat_->static_map(NatPrefix::v6(Ipv6Addr::parse(lan_host(true))),
                     NatPrefix::v6(Ipv6Addr::parse("2001:2:0:100::50")));
    nat_->destination(untrust_, proto::kTcp, Ipv4Addr::parse(wan_addr(false)), 8080, Ipv4Addr::parse(lan_host(false)),
                      80);
    expect_untouched("IPv4 source rule of the other generation", false, lan_host(false));
    expect_untouched("IPv6 static rule of the other generation", true, lan_host(true));
    // Untranslated, the packet is for the firewall itself, which the WAN
    // zone may not reach: host-inbound drops it.
    Bytes in = from_wan(false, wan_host(false), wan_addr(false)).tcp(50000, 8080).syn().build();
    expect_nat("destination rule of the other generation", in, wan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HOST_INBOUND));
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 0);
}

// Source NAT is for flows policy admitted: a denied flow takes no port.
TEST_F(NatNegativeTest, DeniedFlowTakesNoPort) {
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(wan_addr(false)), Ipv6Addr::parse(wan_addr(true)), 20000, 29999);
    nat_->source_interface(0, trust_, untrust_);
    expect_nat("UDP 54: no policy permits it", from_lan(false, lan_host(false), wan_host(false)).udp(41000, 54).build(),
               lan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DEFAULT));
    EXPECT_EQ(nat_->reservations(), 0u);
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), 0);
}

// Two inside hosts mapped (by mistake) to one outside address: the second
// flow would take over the first one's reply tuple, so it is refused, and
// the first flow is unaffected.
TEST_F(NatNegativeTest, TranslatedTupleInUseIsRefused) {
    nat_->static_map(NatPrefix::v4(Ipv4Addr::parse(lan_host(false))), NatPrefix::v4(Ipv4Addr::parse("198.18.100.50")));
    nat_->static_map(NatPrefix::v4(Ipv4Addr::parse("198.18.1.11")), NatPrefix::v4(Ipv4Addr::parse("198.18.100.50")));
    const std::string wan = wan_host(false);
    auto query = [](PacketBuilder b) { return b.udp(41000, 53).payload_pattern(12).build(); };
    expect_nat("first host", query(from_lan(false, lan_host(false), wan)), lan_if(), XDP_REDIRECT,
               query(to_wan(false, "198.18.100.50", wan)));
    snapshot_stats();
    expect_nat("second host, same translated tuple", query(from_lan(false, "198.18.1.11", wan)), lan_if(), XDP_DROP,
               std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_TUPLE_IN_USE));
    EXPECT_FALSE(session(false, "198.18.1.11", wan, 41000, 53, proto::kUdp)) << "refused flow left its entry";
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 2u);
    auto reply = session(false, wan, "198.18.100.50", 53, 41000, proto::kUdp);
    ASSERT_TRUE(reply);
    EXPECT_EQ(addr_text(reply->nat.new_dst_addr, false), lan_host(false))
        << "the first flow's reply entry was replaced";
    auto answer = [](PacketBuilder b) { return b.udp(53, 41000).payload_pattern(40).build(); };
    expect_nat("first flow's reply", answer(from_wan(false, wan, "198.18.100.50")), wan_if(), XDP_REDIRECT,
               answer(to_lan(false, wan, lan_host(false))));
}

// A port forward on the interface address holds no reservation, so source
// NAT may pick its port. If the chosen tuple is the port-forwarded flow's
// (same remote address and port), the new flow is refused and its port
// given back; the port-forwarded flow is unaffected.
TEST_F(NatNegativeTest, SourceNatTupleTakenByPortForwardIsRefusedAndReleased) {
    const std::string lan = lan_host(false), wan = wan_host(false), nat = wan_addr(false);
    nat_->destination(untrust_, proto::kUdp, Ipv4Addr::parse(nat), 20000, Ipv4Addr::parse(lan), 53);
    nat_->source_interface(0, trust_, untrust_);
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(nat), std::nullopt, 20000, 20000);
    expect_nat("port-forwarded query from W:53", from_wan(false, wan, nat).udp(53, 20000).build(), wan_if(),
               XDP_REDIRECT, to_lan(false, wan, lan).udp(53, 53).build());
    snapshot_stats();
    expect_nat("LAN host to W:53, would be N:20000", from_lan(false, lan, wan).udp(41000, 53).build(), lan_if(),
               XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_TUPLE_IN_USE));
    EXPECT_EQ(nat_->reservations(), 0u) << "the refused flow's port was not given back";
    EXPECT_FALSE(session(false, lan, wan, 41000, 53, proto::kUdp));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 2u);
    auto pf = session(false, wan, nat, 53, 20000, proto::kUdp);
    ASSERT_TRUE(pf);
    EXPECT_EQ(pf->nat.flags, SESSION_NAT_DST);
    EXPECT_EQ(addr_text(pf->nat.new_dst_addr, false), lan);
    // A flow to another remote port gets the port.
    expect_nat("TCP to W:80 (another tuple) gets the port", from_lan(false, lan, wan).tcp(41000, 80).syn().build(),
               lan_if(), XDP_REDIRECT, to_wan(false, nat, wan).tcp(20000, 80).syn().build());
}

// Several source rules: the lowest-numbered matching one wins.
TEST_F(NatNegativeTest, LowestMatchingSourceRuleWins) {
    NatPoolSpec pool;
    auto a = Ipv4Addr::parse("198.18.100.90");
    std::array<uint8_t, 16> first{};
    std::copy(a.bytes.begin(), a.bytes.end(), first.begin());
    pool.ranges.push_back({first, 1});
    pool.port_first = 60000;
    pool.port_last = 60999;
    nat_->pool(2, pool);
    nat_->ifaddr(wan_if(), Ipv4Addr::parse(wan_addr(false)), std::nullopt, 20000, 29999);
    // Rule 0: LAN host only, to the WAN subnet → pool; rule 1: anything → interface.
    nat_->source_pool(0, trust_, untrust_, 2, {NatPrefix::v4(Ipv4Addr::parse(lan_host(false)))},
                      {NatPrefix::v4(Ipv4Addr::parse("198.18.100.0"), 24)}, 10);
    nat_->source_interface(1, trust_, untrust_, {NatPrefix::any4()}, {NatPrefix::any4()}, 11);
    auto r = expect_nat("LAN host → rule 0", from_lan(false, lan_host(false), wan_host(false)).udp(41000, 53).build(),
                        lan_if(), XDP_REDIRECT, std::nullopt);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, "198.18.100.90");
    auto held = nat_->reservation(Ipv4Addr::parse("198.18.100.90"), f->sport, proto::kUdp);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->rule_id, 10u);
    r = expect_nat("other host → rule 1", from_lan(false, "198.18.1.11", wan_host(false)).udp(41000, 53).build(),
                   lan_if(), XDP_REDIRECT, std::nullopt);
    f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, wan_addr(false));
    held = nat_->reservation(Ipv4Addr::parse(wan_addr(false)), f->sport, proto::kUdp);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->rule_id, 11u);
}

}  // namespace
}  // namespace sluice::test
