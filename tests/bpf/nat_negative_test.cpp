// What must not be translated, and translations that cannot be made: no
// address for interface source NAT, flows no rule matches (source,
// destination, zone pair, inactive generation), flows policy refuses (no
// port taken), and a translated tuple a port-forwarded flow already holds.
#include <bpf/bpf.h>

#include "loader/datapath.h"
#include "loader/nat_tables.h"
#include "nat_env.h"

namespace sluice::test {
namespace {

class NatNegativeTest : public NatTest {
protected:
    // A state the daemon never writes (it hands out kIfaddrPortFirst-
    // kIfaddrPortLast on every interface address, and the config has no
    // port range for `translate: interface`): the interface's entry, as the
    // daemon wrote it, with only ports first-last, so a test can know the
    // port source NAT will pick.
    void narrow_interface_ports(uint32_t ifindex, uint16_t first, uint16_t last) {
        const int fd = env_->map_fd(SLUICE_MAP_NAT_IFADDRS);
        nat_ifaddr entry{};
        ASSERT_EQ(bpf_map_lookup_elem(fd, &ifindex, &entry), 0) << "no nat_ifaddrs entry for " << ifindex;
        entry.port_first = first;
        entry.port_last = last;
        ASSERT_EQ(bpf_map_update_elem(fd, &ifindex, &entry, BPF_EXIST), 0);
    }

    // The plain forward of a LAN → WAN DNS query from `src`.
    void expect_untouched(const std::string& what, bool v6, const std::string& src) {
        const std::string wan = wan_host(v6);
        expect_nat(what, from_lan(v6, src, wan).udp(41000, 53).payload_pattern(12).build(), lan_if(), XDP_REDIRECT,
                   to_wan(v6, src, wan).udp(41000, 53).payload_pattern(12).build());
        EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 0);
        EXPECT_EQ(reservations(), 0u);
        auto s = session(v6, src, wan, 41000, 53, proto::kUdp);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->nat.flags, 0);
        EXPECT_TRUE(session(v6, wan, src, 53, 41000, proto::kUdp)) << "plain reply entry";
    }
};

// wan0 without addresses (the daemon writes an entry with none), and no
// nat_ifaddrs entry at all (before the daemon's first write).
TEST_F(NatNegativeTest, InterfaceWithoutAddressDrops) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    for (bool entry : {true, false}) {
        if (entry)
            ASSERT_TRUE(write_interface_addresses({}));
        else
            clear_map(env_->map_fd(SLUICE_MAP_NAT_IFADDRS));
        for (bool v6 : {false, true}) {
            snapshot_stats();
            expect_nat(std::string(v6 ? "IPv6, " : "IPv4, ") + (entry ? "no address" : "no nat_ifaddrs entry"),
                       from_lan(v6, lan_host(v6), wan_host(v6)).udp(41000, 53).build(), lan_if(), XDP_DROP,
                       std::nullopt);
            EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_NO_ADDRESS));
            EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 0);
        }
    }
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 0u);
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V6)), 0u);
    EXPECT_EQ(reservations(), 0u);
}

TEST_F(NatNegativeTest, InterfaceWithoutAnAddressOfTheFlowsFamilyDrops) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    ASSERT_TRUE(write_interface_addresses(namespace_addresses(AF_INET)));  // as if wan0 had no IPv6 address
    snapshot_stats();
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
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  source:
    - { name: upper-half, from: trust, to: untrust, source: [198.18.1.128/25, "2001:2:0:1:8000::/65"],
        translate: interface }
)yaml"));
    expect_untouched("IPv4 source outside the rule's prefix", false, lan_host(false));
    expect_untouched("IPv6 source outside the rule's prefix", true, lan_host(true));
    // ... while a source inside it is translated.
    auto r = expect_nat("inside the prefix", from_lan(false, "198.18.1.200", wan_host(false)).udp(41000, 53).build(),
                        lan_if(), XDP_REDIRECT, std::nullopt);
    EXPECT_EQ(parse_frame(r.output)->src_ip, wan_addr(false));
}

TEST_F(NatNegativeTest, NoRuleMatchesTheDestination) {
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  source:
    - { name: elsewhere, from: trust, to: untrust, destination: [198.19.0.0/16, "2001:2:0:f000::/52"],
        translate: interface }
)yaml"));
    expect_untouched("IPv4 destination outside the rule's", false, lan_host(false));
    expect_untouched("IPv6 destination outside the rule's", true, lan_host(true));
}

TEST_F(NatNegativeTest, RuleOfAnotherZonePairDoesNotApply) {
    ASSERT_TRUE(apply_nat("nat: { source: [ { name: wan-in, from: untrust, to: trust, translate: interface } ] }\n"));
    expect_untouched("trust → untrust, rule is untrust → trust", false, lan_host(false));
}

// Rules written for the inactive generation are not in force: a config
// compiled for it and its NAT tables written (loader write_nat_generation,
// what Datapath::apply does before its flip), without the flip.
TEST_F(NatNegativeTest, InactiveGenerationDoesNotApply) {
    ASSERT_TRUE(apply_nat(""));
    auto staged = env_->compile(with_nat(R"yaml(
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
  static:
    - { inside: "2001:2:0:1::10", outside: "2001:2:0:100::50" }
  destination:
    - { name: web-in, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.10, port: 80 } }
)yaml"));
    ASSERT_TRUE(staged) << staged.error().message;
    ASSERT_EQ(staged.value().nat.generation, env_->datapath().inactive_generation());
    ASSERT_FALSE(staged.value().nat.destination.empty());
    Status written = write_nat_generation(env_->datapath(), staged.value().nat);
    ASSERT_TRUE(written) << written.error().message;
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
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    expect_nat("UDP 54: no policy permits it", from_lan(false, lan_host(false), wan_host(false)).udp(41000, 54).build(),
               lan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DEFAULT));
    EXPECT_EQ(reservations(), 0u);
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), 0);
}

// A port forward on the interface address holds no reservation, so source
// NAT may pick its port. If the chosen tuple is the port-forwarded flow's
// (same remote address and port), the new flow is refused and its port
// given back; the port-forwarded flow is unaffected.
// (Two static mappings onto one outside address would collide the same way,
// but `check` refuses overlapping outside prefixes: no config makes them.)
TEST_F(NatNegativeTest, SourceNatTupleTakenByPortForwardIsRefusedAndReleased) {
    const std::string lan = lan_host(false), wan = wan_host(false), nat = wan_addr(false);
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  destination:
    - { name: dns-in, from: untrust, destination: 198.18.100.1, protocol: udp, port: 20000,
        translate-to: { address: 198.18.1.10, port: 53 } }
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
)yaml"));
    narrow_interface_ports(wan_if(), 20000, 20000);
    expect_nat("port-forwarded query from W:53", from_wan(false, wan, nat).udp(53, 20000).build(), wan_if(),
               XDP_REDIRECT, to_lan(false, wan, lan).udp(53, 53).build());
    snapshot_stats();
    expect_nat("LAN host to W:53, would be N:20000", from_lan(false, lan, wan).udp(41000, 53).build(), lan_if(),
               XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_TUPLE_IN_USE));
    EXPECT_EQ(reservations(), 0u) << "the refused flow's port was not given back";
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
    // Rule 0: LAN host only, to the WAN subnet → pool; rule 1: anything → interface.
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  pools:
    one: { addresses: 198.18.100.90, ports: 60000-60999 }
  source:
    - { name: host-to-wan-net, from: trust, to: untrust, source: 198.18.1.10, destination: 198.18.100.0/24,
        translate: { pool: one } }
    - { name: lan-out, from: trust, to: untrust, translate: interface }
)yaml"));
    auto r = expect_nat("LAN host → rule 0", from_lan(false, lan_host(false), wan_host(false)).udp(41000, 53).build(),
                        lan_if(), XDP_REDIRECT, std::nullopt);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, "198.18.100.90");
    auto held = reservation(false, "198.18.100.90", f->sport, proto::kUdp);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->rule_id, 0u);
    r = expect_nat("other host → rule 1", from_lan(false, "198.18.1.11", wan_host(false)).udp(41000, 53).build(),
                   lan_if(), XDP_REDIRECT, std::nullopt);
    f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->src_ip, wan_addr(false));
    held = reservation(false, wan_addr(false), f->sport, proto::kUdp);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->rule_id, 1u);
}

}  // namespace
}  // namespace sluice::test
