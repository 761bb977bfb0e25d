// Port reservations: many flows from one source get distinct translated
// ports, each held in nat_ports; a range that runs out refuses the next flow
// (dropped and counted) without disturbing the flows that hold ports.
#include <set>
#include <vector>

#include "nat_env.h"

namespace sluice::test {
namespace {

class NatPortAllocationTest : public NatTest {
protected:
    // Ten thousand flows: sessions and port reservations for all of them.
    std::string config_yaml() const override { return NatTest::config_yaml() + "limits: { sessions: 16384 }\n"; }
};

// 10,000 UDP flows from one LAN host to one WAN server, differing in the
// source port only, translated to wan0's address (ports 1024-65535).
TEST_F(NatPortAllocationTest, TenThousandFlowsFromOneSourceGetDistinctPorts) {
    constexpr int kFlows = 10000;
    constexpr uint16_t kFirst = kIfaddrPortFirst, kLast = kIfaddrPortLast;
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    const XdpRunner runner = this->runner();
    const std::string lan = lan_host(false), wan = wan_host(false), nat = wan_addr(false);

    std::set<uint16_t> ports;
    std::vector<uint16_t> in_order;
    int wrong = 0;
    for (int i = 0; i < kFlows; ++i) {
        const uint16_t cport = static_cast<uint16_t>(10000 + i);
        auto r = runner.run(from_lan(false, lan, wan).udp(cport, 53).payload_pattern(8).build(), lan_if());
        ASSERT_TRUE(r.ok()) << r.error().message;
        ASSERT_EQ(xdp_verdict_name(r.value().retval), "XDP_REDIRECT")
            << "flow " << i << ": " << describe_delta(stats_delta());
        auto f = parse_frame(r.value().output);
        ASSERT_TRUE(f && f->l4_present);
        if (f->src_ip != nat || f->dport != 53) ++wrong;
        EXPECT_GE(f->sport, kFirst);
        ports.insert(f->sport);
        in_order.push_back(f->sport);
        // Spot-check whole frames and checksums.
        if (i % 1000 == 0) {
            Bytes expected = to_wan(false, nat, wan).udp(f->sport, 53).payload_pattern(8).build();
            EXPECT_EQ(r.value().output, expected) << hex_diff(expected, r.value().output);
            auto report = verify_checksums(r.value().output);
            EXPECT_TRUE(report.ok()) << report.describe();
        }
    }
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(ports.size(), static_cast<size_t>(kFlows)) << "translated ports are not distinct";
    // RFC 6056: not predictable from the previous flow's port. Sequential
    // allocation would use 1024..11023 in order.
    int successors = 0;
    for (size_t i = 1; i < in_order.size(); ++i) successors += in_order[i] == in_order[i - 1] + 1;
    EXPECT_LT(successors, kFlows / 100) << "ports look sequential";
    ASSERT_FALSE(ports.empty());
    EXPECT_GT(*ports.rbegin() - *ports.begin(), (kLast - kFirst) / 2) << "ports are not spread over the range";
    EXPECT_EQ(reservations(), static_cast<size_t>(kFlows));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 2u * kFlows);
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), kFlows);
    EXPECT_EQ(stat_change(STAT_DROP_NAT_PORTS_EXHAUSTED), 0);
    // Every reservation points back at its flow.
    int bad = 0;
    for (uint16_t p : ports) {
        auto held = reservation(false, nat, p, proto::kUdp);
        if (!held || addr_text(held->inside_addr, false) != lan || port_of(held->inside_port) < 10000 ||
            port_of(held->inside_port) >= 10000 + kFlows)
            ++bad;
    }
    EXPECT_EQ(bad, 0);
}

// A pool with one address and four ports: four flows, then the fifth is
// refused; the first flow keeps translating with its port.
class NatPortExhaustionTest : public NatTest, public ::testing::WithParamInterface<std::pair<bool, L4Kind>> {};

TEST_P(NatPortExhaustionTest, FifthFlowIsDroppedAndCounted) {
    const auto [v6, kind] = GetParam();
    const std::string pool_addr = v6 ? "2001:2:0:100::77" : "198.18.100.77";
    ASSERT_TRUE(apply_nat(R"yaml(
nat:
  pools:
    four-ports: { addresses: [198.18.100.77, "2001:2:0:100::77"], ports: 40000-40003 }
  source:
    - { name: lan-out, from: trust, to: untrust, translate: { pool: four-ports } }
)yaml"));
    const std::string lan = lan_host(v6), wan = wan_host(v6);
    const uint16_t sport = kind == L4Kind::tcp ? 80 : kind == L4Kind::udp ? 53 : 0;
    const uint8_t protocol = l4_protocol(kind, v6);

    std::set<uint16_t> ports;
    uint16_t first_port = 0;
    for (int i = 0; i < 4; ++i) {
        const uint16_t cport = static_cast<uint16_t>(41000 + i);
        auto r = expect_nat("flow " + std::to_string(i), request(from_lan(v6, lan, wan), kind, v6, cport, sport),
                            lan_if(), XDP_REDIRECT, std::nullopt);
        uint16_t port = frame_sport(r.output);
        Bytes expected = request(to_wan(v6, pool_addr, wan), kind, v6, port, sport);
        EXPECT_EQ(r.output, expected) << hex_diff(expected, r.output);
        if (i == 0) first_port = port;
        ports.insert(port);
    }
    EXPECT_EQ(ports, (std::set<uint16_t>{40000, 40001, 40002, 40003}));
    EXPECT_EQ(reservations(), 4u);

    snapshot_stats();
    expect_nat("fifth flow", request(from_lan(v6, lan, wan), kind, v6, 41004, sport), lan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_PORTS_EXHAUSTED));
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 0);
    EXPECT_EQ(reservations(), 4u);
    auto [ks, kd] = request_ports(kind, 41004, sport);
    EXPECT_FALSE(session(v6, lan, wan, ks, kd, protocol)) << "the refused flow left a session";
    EXPECT_EQ(count_entries(env_->map_fd(v6 ? SLUICE_MAP_SESSIONS_V6 : SLUICE_MAP_SESSIONS_V4)), 8u);

    // The first flow still translates with its port, both ways.
    Bytes next_in, next_out;
    if (kind == L4Kind::tcp) {
        // Its SYN-ACK first, then an ACK.
        expect_nat("first flow's SYN-ACK", response(from_wan(v6, wan, pool_addr), kind, v6, sport, first_port),
                   wan_if(), XDP_REDIRECT, response(to_lan(v6, wan, lan), kind, v6, sport, 41000));
        next_in = from_lan(v6, lan, wan).tcp(41000, sport).seq(1001).ack_seq(7001).ack().build();
        next_out = to_wan(v6, pool_addr, wan).tcp(first_port, sport).seq(1001).ack_seq(7001).ack().build();
    } else {
        next_in = request(from_lan(v6, lan, wan), kind, v6, 41000, sport);
        next_out = request(to_wan(v6, pool_addr, wan), kind, v6, first_port, sport);
        expect_nat("first flow's reply", response(from_wan(v6, wan, pool_addr), kind, v6, sport, first_port), wan_if(),
                   XDP_REDIRECT, response(to_lan(v6, wan, lan), kind, v6, sport, 41000));
    }
    expect_nat("first flow again", next_in, lan_if(), XDP_REDIRECT, next_out);
    // The fifth flow is refused again (nothing was freed).
    snapshot_stats();
    expect_nat("fifth flow again", request(from_lan(v6, lan, wan), kind, v6, 41004, sport), lan_if(), XDP_DROP,
               std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_PORTS_EXHAUSTED));
}

INSTANTIATE_TEST_SUITE_P(Nat, NatPortExhaustionTest,
                         ::testing::Values(std::pair{false, L4Kind::udp}, std::pair{false, L4Kind::tcp},
                                           std::pair{false, L4Kind::echo}, std::pair{true, L4Kind::udp}),
                         [](const ::testing::TestParamInfo<std::pair<bool, L4Kind>>& info) {
                             return std::string(info.param.first ? "ipv6_" : "ipv4_") + l4_name(info.param.second);
                         });

// One address with one port.
const char* const kOnePortPoolYaml = R"yaml(
nat:
  pools:
    one-port: { addresses: 198.18.100.78, ports: 50000 }
  source:
    - { name: lan-out, from: trust, to: untrust, translate: { pool: one-port } }
)yaml";

// A closed TCP flow whose tuple is reused by a fresh SYN gives back its port
// and is translated anew: with a one-port range, the new SYN can only get the
// port if the old reservation was released.
TEST_F(NatPortAllocationTest, ReusedClosedTcpTupleReleasesItsPort) {
    ASSERT_TRUE(apply_nat(kOnePortPoolYaml));
    const std::string lan = lan_host(false), wan = wan_host(false), nat = "198.18.100.78";
    expect_nat("SYN", from_lan(false, lan, wan).tcp(41000, 80).seq(1).syn().build(), lan_if(), XDP_REDIRECT,
               to_wan(false, nat, wan).tcp(50000, 80).seq(1).syn().build());
    expect_nat("SYN-ACK", from_wan(false, wan, nat).tcp(80, 50000).seq(9).ack_seq(2).syn().ack().build(), wan_if(),
               XDP_REDIRECT, to_lan(false, wan, lan).tcp(80, 41000).seq(9).ack_seq(2).syn().ack().build());
    expect_nat("RST", from_lan(false, lan, wan).tcp(41000, 80).seq(2).rst().build(), lan_if(), XDP_REDIRECT,
               to_wan(false, nat, wan).tcp(50000, 80).seq(2).rst().build());
    snapshot_stats();
    expect_nat("new SYN on the same tuple", from_lan(false, lan, wan).tcp(41000, 80).seq(100).syn().build(), lan_if(),
               XDP_REDIRECT, to_wan(false, nat, wan).tcp(50000, 80).seq(100).syn().build());
    EXPECT_EQ(stat_change(STAT_NAT_PORT_ALLOCATED), 1);
    EXPECT_EQ(reservations(), 1u);
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 2u);
    auto s = session(false, lan, wan, 41000, 80, proto::kTcp);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->tcp_state, TCP_SESSION_SYN_SENT);
    EXPECT_EQ(s->nat.flags, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
}

// Reservations are per protocol: a full UDP range does not refuse TCP.
TEST_F(NatPortAllocationTest, ReservationsArePerProtocol) {
    ASSERT_TRUE(apply_nat(kOnePortPoolYaml));
    const std::string lan = lan_host(false), wan = wan_host(false), nat = "198.18.100.78";
    expect_nat("udp", from_lan(false, lan, wan).udp(41000, 53).build(), lan_if(), XDP_REDIRECT,
               to_wan(false, nat, wan).udp(50000, 53).build());
    expect_nat("tcp", from_lan(false, lan, wan).tcp(41000, 80).syn().build(), lan_if(), XDP_REDIRECT,
               to_wan(false, nat, wan).tcp(50000, 80).syn().build());
    expect_nat("echo", from_lan(false, lan, wan).icmp_echo_request(41000, 1).build(), lan_if(), XDP_REDIRECT,
               to_wan(false, nat, wan).icmp_echo_request(50000, 1).build());
    snapshot_stats();
    expect_nat("second udp", from_lan(false, lan, wan).udp(41001, 53).build(), lan_if(), XDP_DROP, std::nullopt);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_NAT_PORTS_EXHAUSTED));
    EXPECT_EQ(reservations(), 3u);
}

}  // namespace
}  // namespace sluice::test
