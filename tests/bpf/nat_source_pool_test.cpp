// Source NAT to a pool: the translated source is a pool address with a port
// from the pool's range; a persistent pool gives one source host the same
// address for all its flows; replies are translated back exactly.
#include <map>
#include <set>

#include "nat_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kPortFirst = 30000, kPortLast = 39999;

// Pool "public": 198.18.100.10-13 and 2001:2:0:100::10-13, each in two
// ranges, so picking walks the ranges. Pool "other", never used, comes first,
// so that public's index is not 0; rule wan-in, never matched by these flows,
// comes first, so that lan-out's id (its position in nat.source) is 1.
std::string pool_config(bool persistent) {
    std::string yaml = R"yaml(
nat:
  pools:
    other: { addresses: [198.18.102.1, "2001:2:0:102::1"] }
    public:
      addresses: [198.18.100.10-198.18.100.11, 198.18.100.12-198.18.100.13,
                  "2001:2:0:100::10-2001:2:0:100::11", "2001:2:0:100::12-2001:2:0:100::13"]
      ports: 30000-39999
      persistent: PERSISTENT
  source:
    - { name: wan-in, from: untrust, to: trust, translate: interface }
    - { name: lan-out, from: trust, to: untrust, translate: { pool: public } }
)yaml";
    return yaml.replace(yaml.find("PERSISTENT"), 10, persistent ? "true" : "false");
}
constexpr uint32_t kLanOutRuleId = 1;

std::set<std::string> pool_addresses(bool v6) {
    if (v6) return {"2001:2:0:100::10", "2001:2:0:100::11", "2001:2:0:100::12", "2001:2:0:100::13"};
    return {"198.18.100.10", "198.18.100.11", "198.18.100.12", "198.18.100.13"};
}

// A LAN source host other than the neighbour-resolved one (sources are not routed).
std::string lan_source(bool v6, int n) {
    return v6 ? "2001:2:0:1::" + std::to_string(10 + n) : "198.18.1." + std::to_string(10 + n);
}

class NatSourcePoolTest : public NatTest {
protected:
    // Runs one flow (kind, client port) from `src` and checks it fully; returns
    // the translated source address.
    std::string translate_one(bool v6, const std::string& src, L4Kind kind, uint16_t cport);
    void persistent_case(bool v6);
};

std::string NatSourcePoolTest::translate_one(bool v6, const std::string& src, L4Kind kind, uint16_t cport) {
    const std::string wan = wan_host(v6);
    const uint16_t sport = kind == L4Kind::tcp ? 80 : kind == L4Kind::udp ? 53 : 0;
    const uint8_t proto = l4_protocol(kind, v6);
    auto r = run(request(from_lan(v6, src, wan), kind, v6, cport, sport), lan_if());
    EXPECT_EQ(xdp_verdict_name(r.retval), "XDP_REDIRECT") << describe_delta(stats_delta());
    auto f = parse_frame(r.output);
    if (!f) {
        ADD_FAILURE() << "output unparseable";
        return {};
    }
    const std::string addr = f->src_ip;
    const uint16_t port = frame_sport(r.output);
    EXPECT_TRUE(pool_addresses(v6).count(addr)) << addr << " is not a pool address";
    EXPECT_GE(port, kPortFirst);
    EXPECT_LE(port, kPortLast);
    Bytes expected = request(to_wan(v6, addr, wan), kind, v6, port, sport);
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
    auto report = verify_checksums(r.output);
    EXPECT_TRUE(report.ok()) << report.describe();
    auto held = reservation(v6, addr, port, proto);
    EXPECT_TRUE(held) << "no reservation for " << addr << " port " << port;
    if (held) {
        EXPECT_EQ(addr_text(held->inside_addr, v6), src);
        EXPECT_EQ(port_of(held->inside_port), cport);
        EXPECT_EQ(held->rule_id, kLanOutRuleId);
    }
    // The reply comes back to the original source. Only the neighbour-resolved
    // LAN host can be forwarded to, so only its flows are answered here.
    if (src == lan_host(v6))
        expect_nat("reply to " + addr, response(from_wan(v6, wan, addr), kind, v6, sport, port), wan_if(), XDP_REDIRECT,
                   response(to_lan(v6, wan, src), kind, v6, sport, cport));
    return addr;
}

void NatSourcePoolTest::persistent_case(bool v6) {
    ASSERT_TRUE(apply_nat(pool_config(true)));
    // Several hosts, several flows each: one address per host.
    std::set<std::string> used;
    for (int host = 0; host < 6; ++host) {
        std::string src = lan_source(v6, host);
        std::set<std::string> addrs;
        for (int flow = 0; flow < 4; ++flow) {
            L4Kind kind = flow % 3 == 0 ? L4Kind::udp : flow % 3 == 1 ? L4Kind::tcp : L4Kind::echo;
            addrs.insert(translate_one(v6, src, kind, static_cast<uint16_t>(41000 + flow)));
            if (HasFailure()) return;
        }
        EXPECT_EQ(addrs.size(), 1u) << src << " got more than one pool address from a persistent pool";
        used.insert(addrs.begin(), addrs.end());
    }
    EXPECT_EQ(reservations(), 24u);
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), 24);
}

TEST_F(NatSourcePoolTest, Ipv4PersistentPool) {
    persistent_case(false);
}
TEST_F(NatSourcePoolTest, Ipv6PersistentPool) {
    persistent_case(true);
}

// Persistence must not mean "one address per subnet": hosts that differ only
// in their last bits (a LAN) are spread over the pool's addresses.
TEST_F(NatSourcePoolTest, Ipv4PersistentPoolSpreadsTheHostsOfOneSubnet) {
    ASSERT_TRUE(apply_nat(pool_config(true)));
    std::map<std::string, int> hosts_per_address;
    for (int host = 0; host < 64 && !HasFailure(); ++host)
        hosts_per_address[translate_one(false, lan_source(false, host), L4Kind::udp, 41000)]++;
    EXPECT_EQ(hosts_per_address.size(), 4u)
        << "64 hosts of one /24 used only " << hosts_per_address.size() << " of the pool's 4 addresses";
}

TEST_F(NatSourcePoolTest, Ipv6PersistentPoolSpreadsTheHostsOfOneSubnet) {
    ASSERT_TRUE(apply_nat(pool_config(true)));
    std::map<std::string, int> hosts_per_address;
    for (int host = 0; host < 64 && !HasFailure(); ++host)
        hosts_per_address[translate_one(true, lan_source(true, host), L4Kind::udp, 41000)]++;
    EXPECT_EQ(hosts_per_address.size(), 4u)
        << "64 hosts of one /64 used only " << hosts_per_address.size() << " of the pool's 4 addresses";
}

TEST_F(NatSourcePoolTest, Ipv4NonPersistentPoolAddressesStayInPool) {
    ASSERT_TRUE(apply_nat(pool_config(false)));
    for (int flow = 0; flow < 12 && !HasFailure(); ++flow)
        translate_one(false, lan_host(false), L4Kind::udp, static_cast<uint16_t>(42000 + flow));
    EXPECT_EQ(reservations(), 12u);
}

// Rule pool-out, first in nat.source, whose pool has IPv4 addresses only.
const char* const kV4OnlyPoolYaml = R"yaml(
nat:
  pools:
    v4-only: { addresses: 198.18.100.10-198.18.100.13, ports: 30000-39999 }
  source:
    - { name: pool-out, from: trust, to: untrust, translate: { pool: v4-only } }
)yaml";

// A pool rule takes part only in the families its pool has addresses of
// (the compiler leaves it out of the others' tables): an IPv6 flow under a
// rule whose pool is IPv4-only goes on to the next rule, here the interface.
TEST_F(NatSourcePoolTest, PoolWithoutTheFlowsFamilyLeavesTheFlowToTheNextRule) {
    ASSERT_TRUE(apply_nat(std::string(kV4OnlyPoolYaml) +
                          "    - { name: interface-out, from: trust, to: untrust, translate: interface }\n"));
    auto r =
        expect_nat("IPv6 flow", request(from_lan(true, lan_host(true), wan_host(true)), L4Kind::udp, true, 41000, 53),
                   lan_if(), XDP_REDIRECT, std::nullopt);
    const uint16_t port = frame_sport(r.output);
    Bytes expected = request(to_wan(true, wan_addr(true), wan_host(true)), L4Kind::udp, true, port, 53);
    EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
    auto held = reservation(true, wan_addr(true), port, proto::kUdp);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->rule_id, 1u) << "not rule interface-out";
    // An IPv4 flow still takes the pool.
    r = expect_nat("IPv4 flow",
                   request(from_lan(false, lan_host(false), wan_host(false)), L4Kind::udp, false, 41001, 53), lan_if(),
                   XDP_REDIRECT, std::nullopt);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f);
    EXPECT_TRUE(pool_addresses(false).count(f->src_ip)) << f->src_ip << " is not a pool address";
    held = reservation(false, f->src_ip, f->sport, proto::kUdp);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->rule_id, 0u) << "not rule pool-out";
}

// ... and with no next rule, the flow is not translated (nor dropped).
TEST_F(NatSourcePoolTest, PoolWithoutTheFlowsFamilyLeavesTheFlowUntranslated) {
    ASSERT_TRUE(apply_nat(kV4OnlyPoolYaml));
    auto in = request(from_lan(true, lan_host(true), wan_host(true)), L4Kind::udp, true, 41000, 53);
    expect_nat("IPv6 flow, IPv4-only pool", in, lan_if(), XDP_REDIRECT,
               request(to_wan(true, lan_host(true), wan_host(true)), L4Kind::udp, true, 41000, 53));
    EXPECT_EQ(stat_change(STAT_NAT_TRANSLATED), 0);
    EXPECT_EQ(stat_change(STAT_DROP_NAT_NO_ADDRESS), 0);
    EXPECT_EQ(reservations(), 0u);
}

}  // namespace
}  // namespace sluice::test
