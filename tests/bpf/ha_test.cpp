// The datapath's part of the HA pair (maps/ha.h, bpf/ha.bpf.h): lan0 is in
// redundancy group 1. While this node does not carry the group it forwards
// nothing from or towards it — new flows and synced sessions alike — and
// still answers what host-inbound allows; once the group is active the
// same packets are forwarded. With session sync on, every flow the datapath
// creates or moves to another TCP state is reported on ha_events.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstring>
#include <vector>

#include "ha_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40100;

const char* const kHaYaml = R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: { host-inbound: [ping] }
  untrust: {}
policies:
  - { name: out, from: trust, to: untrust, action: permit }
  - { name: in, from: untrust, to: trust, action: permit }
default-action: deny
ha:
  fabric: wan0
  nodes:
    fw0: { id: 1, fabric-address: 198.18.100.1 }
    fw1: { id: 2, fabric-address: 198.18.100.2 }
  groups:
    gateway:
      priority: { fw0: 200, fw1: 100 }
      interfaces:
        lan0: { virtual-mac: "02:53:4c:00:01:01", addresses: [198.18.1.254/24] }
)yaml";

class HaTest : public DatapathTest {
protected:
    std::string config_yaml() const override { return kHaYaml; }

    void set_group(bool active) {
        uint32_t key = 1;
        ha_group_state st{};
        st.active = active ? 1 : 0;
        ASSERT_EQ(bpf_map_update_elem(env_->map_fd(SLUICE_MAP_HA_GROUPS), &key, &st, BPF_ANY), 0);
    }

    void set_sync(bool on) { set_ha_sync(env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG), on); }
    std::vector<ha_event> drain_events() { return drain_ha_events(env_->map_fd(SLUICE_MAP_HA_EVENTS)); }

    Bytes syn4() const { return lan_to_wan4().tcp(kClientPort, 80).seq(1000).syn().build(); }
    Bytes syn4_out() const { return lan_to_wan4_out().tcp(kClientPort, 80).seq(1000).syn().build(); }
    Bytes synack4() const { return wan_to_lan4().tcp(80, kClientPort).seq(5000).ack_seq(1001).syn().ack().build(); }
    Bytes ack4() const { return lan_to_wan4().tcp(kClientPort, 80).seq(1001).ack_seq(5001).ack().build(); }
    Bytes ack4_out() const { return lan_to_wan4_out().tcp(kClientPort, 80).seq(1001).ack_seq(5001).ack().build(); }
};

// The event names this IPv4 TCP tuple (and nothing past the address).
bool event_is(const ha_event& e, const Ipv4Addr& src, const Ipv4Addr& dst, uint16_t sport, uint16_t dport) {
    return e.family == SLUICE_FAMILY_IPV4 && e.protocol == 6 && std::memcmp(&e.src_addr[0], src.bytes.data(), 4) == 0 &&
           std::memcmp(&e.dst_addr[0], dst.bytes.data(), 4) == 0 && ntohs(e.src_port) == sport &&
           ntohs(e.dst_port) == dport && e.src_addr[1] == 0 && e.dst_addr[3] == 0;
}

}  // namespace

TEST_F(HaTest, StandbyForwardsNothingFromTheGroupAndCountsIt) {
    // No agent has elected this node: the zeroed ha_groups entry is standby.
    snapshot_stats();
    EXPECT_EQ(run(syn4(), lan_if()).retval, XDP_DROP);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HA_STANDBY));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 0u);
    // IPv6 too.
    snapshot_stats();
    EXPECT_EQ(run(lan_to_wan6().tcp(kClientPort, 80).syn().build(), lan_if()).retval, XDP_DROP);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HA_STANDBY));
}

TEST_F(HaTest, StandbyForwardsNothingTowardsTheGroup) {
    // wan0 is in no group, lan0 is: a permitted untrust -> trust flow.
    snapshot_stats();
    EXPECT_EQ(run(wan_to_lan4().tcp(50000, 22).syn().build(), wan_if()).retval, XDP_DROP);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HA_STANDBY));
    EXPECT_EQ(count_entries(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 0u);
}

TEST_F(HaTest, StandbyStillAnswersWhatHostInboundAllows) {
    snapshot_stats();
    const Bytes ping = PacketBuilder().eth(kLanHostMac, lan_mac()).ipv4(kLanHost4, kLanFw4).icmp_echo_request(7, 1).build();
    EXPECT_EQ(run(ping, lan_if()).retval, XDP_PASS);
    EXPECT_EQ(stat_change(STAT_DROP_HA_STANDBY), 0);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_LOCAL));
    // What host-inbound does not allow is still dropped by host-inbound.
    snapshot_stats();
    const Bytes ssh = PacketBuilder().eth(kLanHostMac, lan_mac()).ipv4(kLanHost4, kLanFw4).tcp(40000, 22).syn().build();
    EXPECT_EQ(run(ssh, lan_if()).retval, XDP_DROP);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HOST_INBOUND));
}

TEST_F(HaTest, ActiveGroupForwardsAndASyncedSessionStopsAndResumesWithTheRole) {
    set_group(true);
    expect_fixture({"SYN while active", syn4(), lan_if(), XDP_REDIRECT, syn4_out()});
    EXPECT_EQ(run(synack4(), wan_if()).retval, XDP_REDIRECT);
    expect_fixture({"ACK while active", ack4(), lan_if(), XDP_REDIRECT, ack4_out()});
    auto s = session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->tcp_state, TCP_SESSION_ESTABLISHED);

    // Standby: the session stays, its packets are not forwarded.
    set_group(false);
    snapshot_stats();
    EXPECT_EQ(run(ack4(), lan_if()).retval, XDP_DROP);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HA_STANDBY));
    EXPECT_EQ(stat_change(STAT_SESSION_HIT), 0);
    const uint64_t packets_before = s->packets;
    auto after = session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp);
    ASSERT_TRUE(after);
    EXPECT_EQ(after->packets, packets_before);

    // Active again (a takeover): the same session carries the flow on.
    set_group(true);
    snapshot_stats();
    expect_fixture({"ACK after takeover", ack4(), lan_if(), XDP_REDIRECT, ack4_out()});
    EXPECT_EQ(stat_change(STAT_SESSION_HIT), 1);
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 0);
}

TEST_F(HaTest, SyncOnReportsEveryNewFlowAndStateChange) {
    set_group(true);
    set_sync(true);
    drain_events();
    snapshot_stats();
    ASSERT_EQ(run(syn4(), lan_if()).retval, XDP_REDIRECT);
    auto events = drain_events();
    ASSERT_EQ(events.size(), 1u) << "the SYN creates the flow";
    EXPECT_TRUE(event_is(events[0], kLanHost4, kWanHost4, kClientPort, 80));

    ASSERT_EQ(run(synack4(), wan_if()).retval, XDP_REDIRECT);
    events = drain_events();
    ASSERT_EQ(events.size(), 1u) << "SYN-SENT -> SYN-RECV";
    EXPECT_TRUE(event_is(events[0], kWanHost4, kLanHost4, 80, kClientPort)) << "keyed by the reply entry it came on";

    ASSERT_EQ(run(ack4(), lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(drain_events().size(), 1u) << "SYN-RECV -> ESTABLISHED";
    // Data in an established flow changes nothing to sync.
    ASSERT_EQ(run(ack4(), lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(drain_events().size(), 0u);
    EXPECT_EQ(stat_change(STAT_HA_EVENT_SENT), 3);
    EXPECT_EQ(stat_change(STAT_HA_EVENT_LOST), 0);

    // IPv6 and UDP alike.
    ASSERT_EQ(run(lan_to_wan6().udp(5353, 53).payload("q").build(), lan_if()).retval, XDP_REDIRECT);
    events = drain_events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].family, SLUICE_FAMILY_IPV6);
    EXPECT_EQ(events[0].protocol, 17);
    EXPECT_EQ(std::memcmp(events[0].src_addr, kLanHost6.bytes.data(), 16), 0);
}

TEST_F(HaTest, SyncOffReportsNothing) {
    set_group(true);
    drain_events();
    snapshot_stats();
    ASSERT_EQ(run(syn4(), lan_if()).retval, XDP_REDIRECT);
    ASSERT_EQ(run(synack4(), wan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(drain_events().size(), 0u);
    EXPECT_EQ(stat_change(STAT_HA_EVENT_SENT), 0);
}

}  // namespace sluice::test
