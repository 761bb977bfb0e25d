// Host-inbound (maps/host_inbound.h, bpf/host_inbound.bpf.h): packets for the
// firewall itself are judged in XDP by the zone they arrive from. trust allows
// ping, ssh and a few entries of its own; untrust allows nothing. Each case
// checks the verdict, the frame (passed untouched), the drop/pass counter and
// the per-zone, per-service counter.
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <cstring>
#include <ctime>

#include "datapath_env.h"
#include "loader/host_inbound_tables.h"

namespace sluice::test {
namespace {

const char* const kHostInboundYaml = R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust:
    host-inbound:
      - ping
      - ssh
      - { protocol: tcp, port: 8000-8001 }
      - { protocol: icmp, type: 13 }
      - { protocol: 47 }
  untrust: {}
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
default-action: deny
timeouts: { udp: 1s }
)yaml";

// Service ids as the compiler numbers them: built-ins, the named services in
// catalog order (ping, ssh, dns, dhcp, ntp, bgp, http, https, traceroute,
// metrics), then the entries of the config in file order.
constexpr uint32_t kPing = HOST_SVC_FIRST_NAMED + 0;
constexpr uint32_t kSsh = HOST_SVC_FIRST_NAMED + 1;
constexpr uint32_t kDns = HOST_SVC_FIRST_NAMED + 2;
constexpr uint32_t kHttp = HOST_SVC_FIRST_NAMED + 6;
constexpr uint32_t kTcp8000 = HOST_SVC_FIRST_NAMED + 10;
constexpr uint32_t kIcmpType13 = HOST_SVC_FIRST_NAMED + 11;
constexpr uint32_t kGre = HOST_SVC_FIRST_NAMED + 12;
constexpr uint16_t kTrust = 1, kUntrust = 2;

class HostInboundTest : public DatapathTest {
protected:
    std::string config_yaml() const override { return kHostInboundYaml; }

    static const Ipv4Addr kWanFw4, kLanFw4Addr;
    static const Ipv6Addr kWanFw6;

    PacketBuilder from_lan4(const Ipv4Addr& dst) const {
        return std::move(PacketBuilder().eth(kLanHostMac, lan_mac()).ipv4(kLanHost4, dst));
    }
    PacketBuilder from_wan4(const Ipv4Addr& dst) const {
        return std::move(PacketBuilder().eth(kWanHostMac, wan_mac()).ipv4(kWanHost4, dst));
    }
    PacketBuilder from_lan6(const Ipv6Addr& dst) const {
        return std::move(PacketBuilder().eth(kLanHostMac, lan_mac()).ipv6(kLanHost6, dst));
    }
    PacketBuilder from_wan6(const Ipv6Addr& dst) const {
        return std::move(PacketBuilder().eth(kWanHostMac, wan_mac()).ipv6(kWanHost6, dst));
    }

    // host_hits of the active generation: {accepted, dropped}.
    std::pair<uint64_t, uint64_t> hits(uint16_t zone, uint32_t service) {
        runtime_config cfg{};
        uint32_t key = 0;
        EXPECT_EQ(bpf_map_lookup_elem(env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG), &key, &cfg), 0);
        auto words = read_percpu_sums(env_->map_fd(SLUICE_MAP_HOST_HITS),
                                      host_hits_index(cfg.policy_generation & 1, zone, service),
                                      sizeof(host_inbound_counter));
        EXPECT_TRUE(words.ok());
        if (!words.ok()) return {0, 0};
        return {words.value()[0], words.value()[1]};
    }

    // The frame goes to the kernel untouched, counted as `reason`, under
    // (zone, service) accepted.
    void expect_accepted(const std::string& what, const Bytes& frame, uint32_t ifindex, uint16_t zone,
                         uint32_t service, int reason = STAT_PASS_LOCAL) {
        auto before = hits(zone, service);
        snapshot_stats();
        expect_fixture({what, frame, ifindex, XDP_PASS, frame});
        EXPECT_TRUE(only_drop_or_pass_counter(reason)) << what;
        auto after = hits(zone, service);
        EXPECT_EQ(after.first, before.first + 1) << what << ": accepted counter";
        EXPECT_EQ(after.second, before.second) << what << ": dropped counter";
    }

    void expect_dropped(const std::string& what, const Bytes& frame, uint32_t ifindex, uint16_t zone,
                        uint32_t service) {
        auto before = hits(zone, service);
        snapshot_stats();
        expect_fixture({what, frame, ifindex, XDP_DROP, std::nullopt});
        EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_HOST_INBOUND)) << what;
        auto after = hits(zone, service);
        EXPECT_EQ(after.first, before.first) << what << ": accepted counter";
        EXPECT_EQ(after.second, before.second + 1) << what << ": dropped counter";
    }

    // A flow the firewall opened, as tc_egress_prog records it: keyed by the
    // tuple of its replies, with the zone it went to (untrust by default).
    void add_host_flow4(const Ipv4Addr& remote, uint16_t remote_port, const Ipv4Addr& local, uint16_t local_port,
                        uint8_t protocol, uint64_t last_seen_ns, uint16_t zone = kUntrust) {
        session_key_v4 k{};
        std::memcpy(&k.src_addr, remote.bytes.data(), 4);
        std::memcpy(&k.dst_addr, local.bytes.data(), 4);
        k.src_port = htons(remote_port);
        k.dst_port = htons(local_port);
        k.protocol = protocol;
        host_flow_value v{last_seen_ns, last_seen_ns, zone, {}};
        ASSERT_EQ(bpf_map_update_elem(env_->map_fd(SLUICE_MAP_HOST_FLOWS_V4), &k, &v, BPF_ANY), 0);
    }
    void add_host_flow6(const Ipv6Addr& remote, uint16_t remote_port, const Ipv6Addr& local, uint16_t local_port,
                        uint8_t protocol, uint64_t last_seen_ns, uint16_t zone = kUntrust) {
        session_key_v6 k{};
        std::memcpy(k.src_addr, remote.bytes.data(), 16);
        std::memcpy(k.dst_addr, local.bytes.data(), 16);
        k.src_port = htons(remote_port);
        k.dst_port = htons(local_port);
        k.protocol = protocol;
        host_flow_value v{last_seen_ns, last_seen_ns, zone, {}};
        ASSERT_EQ(bpf_map_update_elem(env_->map_fd(SLUICE_MAP_HOST_FLOWS_V6), &k, &v, BPF_ANY), 0);
    }
    // bpf_ktime_get_coarse_ns() is CLOCK_MONOTONIC_COARSE.
    static uint64_t coarse_now() {
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
    }
};

const Ipv4Addr HostInboundTest::kWanFw4 = Ipv4Addr::parse(NetnsFixture::kWanAddr4);
const Ipv4Addr HostInboundTest::kLanFw4Addr = Ipv4Addr::parse(NetnsFixture::kLanAddr4);
const Ipv6Addr HostInboundTest::kWanFw6 = Ipv6Addr::parse(NetnsFixture::kWanAddr6);

// A zone's services are its own on every address of the firewall: a LAN
// packet to the WAN address is a LAN packet.
TEST_F(HostInboundTest, TrustReachesSshOnBothAddresses) {
    expect_accepted("IPv4 LAN → LAN address :22", from_lan4(kLanFw4Addr).tcp(40000, 22).syn().build(), lan_if(),
                    kTrust, kSsh);
    expect_accepted("IPv4 LAN → WAN address :22", from_lan4(kWanFw4).tcp(40001, 22).syn().build(), lan_if(), kTrust,
                    kSsh);
    expect_accepted("IPv6 LAN → LAN address :22", from_lan6(kLanFw6).tcp(40000, 22).syn().build(), lan_if(), kTrust,
                    kSsh);
    expect_accepted("IPv6 LAN → WAN address :22", from_lan6(kWanFw6).tcp(40001, 22).syn().build(), lan_if(), kTrust,
                    kSsh);
    // Not only SYNs: the kernel's TCP owns the connection's state.
    expect_accepted("IPv4 LAN → :22 ACK", from_lan4(kLanFw4Addr).tcp(40000, 22).ack().build(), lan_if(), kTrust,
                    kSsh);
}

TEST_F(HostInboundTest, UntrustReachesNothingOnEitherAddress) {
    expect_dropped("IPv4 WAN → WAN address :22", from_wan4(kWanFw4).tcp(40000, 22).syn().build(), wan_if(),
                   kUntrust, kSsh);
    expect_dropped("IPv4 WAN → LAN address :22", from_wan4(kLanFw4Addr).tcp(40000, 22).syn().build(), wan_if(),
                   kUntrust, kSsh);
    expect_dropped("IPv6 WAN → WAN address :22", from_wan6(kWanFw6).tcp(40000, 22).syn().build(), wan_if(),
                   kUntrust, kSsh);
    expect_dropped("IPv6 WAN → LAN address :22", from_wan6(kLanFw6).tcp(40000, 22).syn().build(), wan_if(),
                   kUntrust, kSsh);
    expect_dropped("IPv4 WAN echo", from_wan4(kWanFw4).icmp_echo_request(7, 1).build(), wan_if(), kUntrust, kPing);
    expect_dropped("IPv6 WAN echo", from_wan6(kWanFw6).icmpv6_echo_request(7, 1).build(), wan_if(), kUntrust,
                   kPing);
    expect_dropped("IPv4 WAN UDP :53", from_wan4(kWanFw4).udp(5000, 53).build(), wan_if(), kUntrust, kDns);
    expect_dropped("IPv6 WAN UDP :9999", from_wan6(kWanFw6).udp(5000, 9999).build(), wan_if(), kUntrust,
                   HOST_SVC_OTHER);
}

TEST_F(HostInboundTest, TrustGetsOnlyWhatItLists) {
    expect_accepted("IPv4 LAN echo", from_lan4(kLanFw4Addr).icmp_echo_request(7, 1).build(), lan_if(), kTrust, kPing);
    expect_accepted("IPv6 LAN echo", from_lan6(kLanFw6).icmpv6_echo_request(7, 1).build(), lan_if(), kTrust, kPing);
    expect_dropped("IPv4 LAN :80 (http not listed)", from_lan4(kLanFw4Addr).tcp(40000, 80).syn().build(), lan_if(),
                   kTrust, kHttp);
    expect_dropped("IPv4 LAN UDP :53 (dns not listed)", from_lan4(kLanFw4Addr).udp(5000, 53).build(), lan_if(),
                   kTrust, kDns);
    expect_dropped("IPv4 LAN echo reply (nothing asked)", from_lan4(kLanFw4Addr).icmp_echo_reply(7, 1).build(),
                   lan_if(), kTrust, HOST_SVC_OTHER);
}

TEST_F(HostInboundTest, EntriesOfTheConfig) {
    expect_accepted("TCP :8000", from_lan4(kLanFw4Addr).tcp(40000, 8000).syn().build(), lan_if(), kTrust, kTcp8000);
    expect_accepted("TCP :8001", from_lan6(kLanFw6).tcp(40000, 8001).syn().build(), lan_if(), kTrust, kTcp8000);
    expect_dropped("TCP :8002", from_lan4(kLanFw4Addr).tcp(40000, 8002).syn().build(), lan_if(), kTrust,
                   HOST_SVC_OTHER);
    expect_accepted("ICMP timestamp", from_lan4(kLanFw4Addr).icmp(13, 0).build(), lan_if(), kTrust, kIcmpType13);
    expect_accepted("GRE", from_lan4(kLanFw4Addr).protocol(47).payload_pattern(8).build(), lan_if(), kTrust, kGre);
    expect_dropped("GRE from untrust", from_wan4(kWanFw4).protocol(47).payload_pattern(8).build(), wan_if(),
                   kUntrust, kGre);
}

// Replies to flows the firewall opened pass; the same ports from elsewhere,
// or another port, do not.
TEST_F(HostInboundTest, RepliesToTheFirewallsOwnFlows) {
    const uint64_t now = coarse_now();
    add_host_flow4(kWanHost4, 443, kWanFw4, 50000, proto::kTcp, now);
    add_host_flow6(kWanHost6, 53, kWanFw6, 50001, proto::kUdp, now);
    expect_accepted("IPv4 SYN-ACK from :443", from_wan4(kWanFw4).tcp(443, 50000).syn().ack().build(), wan_if(),
                    kUntrust, HOST_SVC_REPLY);
    expect_accepted("IPv6 DNS answer", from_wan6(kWanFw6).udp(53, 50001).payload("answer").build(), wan_if(),
                    kUntrust, HOST_SVC_REPLY);
    expect_dropped("IPv4 from :443 to another port", from_wan4(kWanFw4).tcp(443, 50002).syn().ack().build(), wan_if(),
                   kUntrust, HOST_SVC_OTHER);
    expect_dropped("IPv6 answer from :54", from_wan6(kWanFw6).udp(54, 50001).build(), wan_if(), kUntrust,
                   HOST_SVC_OTHER);
}

// A reply is a reply only from the zone the flow went to: the same tuple
// arriving from the LAN is not let in.
TEST_F(HostInboundTest, ReplyFromAnotherZoneIsNotAReply) {
    add_host_flow4(kWanHost4, 443, kWanFw4, 50020, proto::kTcp, coarse_now());
    Bytes spoofed = PacketBuilder()
                        .eth(kLanHostMac, lan_mac())
                        .ipv4(kWanHost4, kWanFw4)
                        .tcp(443, 50020)
                        .syn()
                        .ack()
                        .build();
    expect_dropped("the reply's tuple, from the LAN", spoofed, lan_if(), kTrust, HOST_SVC_OTHER);
    expect_accepted("the same from the WAN", from_wan4(kWanFw4).tcp(443, 50020).syn().ack().build(), wan_if(),
                    kUntrust, HOST_SVC_REPLY);
}

// A flow idle past its protocol's timeout (udp: 1s in this config) lets
// nothing in.
TEST_F(HostInboundTest, IdleFlowNoLongerAnswers) {
    const uint64_t now = coarse_now();
    ASSERT_GT(now, 3'000'000'000ull);
    add_host_flow4(kWanHost4, 53, kWanFw4, 50003, proto::kUdp, now - 3'000'000'000ull);
    expect_dropped("answer 3 s after the query", from_wan4(kWanFw4).udp(53, 50003).build(), wan_if(), kUntrust,
                   HOST_SVC_OTHER);
}

TEST_F(HostInboundTest, IcmpErrorsAboutTheFirewallsOwnFlows) {
    const uint64_t now = coarse_now();
    add_host_flow4(kWanHost4, 53, kWanFw4, 50010, proto::kUdp, now);
    add_host_flow6(kWanHost6, 443, kWanFw6, 50011, proto::kTcp, now);
    Bytes quoted4 = PacketBuilder().ipv4(kWanFw4, kWanHost4).udp(50010, 53).build_ip();
    expect_accepted("IPv4 port unreachable about the firewall's DNS query",
                    from_wan4(kWanFw4).icmp_error(3, 3, quoted4).build(), wan_if(), kUntrust, HOST_SVC_ICMP_ERROR);
    Bytes quoted6 = PacketBuilder().ipv6(kWanFw6, kWanHost6).tcp(50011, 443).syn().build_ip();
    expect_accepted("IPv6 packet too big about the firewall's TCP",
                    from_wan6(kWanFw6).icmpv6_error(2, 0, quoted6, 1280).build(), wan_if(), kUntrust,
                    HOST_SVC_ICMP_ERROR);
    // About an allowed service: the firewall's SSH answer to a LAN host.
    Bytes ssh_answer = PacketBuilder().ipv4(kLanFw4Addr, kLanHost4).tcp(22, 40000).syn().ack().build_ip();
    expect_accepted("IPv4 frag needed about the firewall's SSH answer",
                    from_lan4(kLanFw4Addr).icmp_error(3, 4, ssh_answer, 1400).build(), lan_if(), kTrust,
                    HOST_SVC_ICMP_ERROR);
    // About nothing the firewall sent or allows: a forged error.
    Bytes forged = PacketBuilder().ipv4(kWanFw4, kWanHost4).udp(50099, 53).build_ip();
    expect_dropped("IPv4 forged port unreachable", from_wan4(kWanFw4).icmp_error(3, 3, forged).build(), wan_if(),
                   kUntrust, HOST_SVC_ICMP_ERROR);
    Bytes ssh_from_wan = PacketBuilder().ipv4(kWanFw4, kWanHost4).tcp(22, 40000).syn().ack().build_ip();
    expect_dropped("IPv4 error about SSH from untrust (not allowed there)",
                   from_wan4(kWanFw4).icmp_error(3, 4, ssh_from_wan, 1400).build(), wan_if(), kUntrust,
                   HOST_SVC_ICMP_ERROR);
}

// Link scope: neighbour discovery and IGMP are the link's; everything else
// sent to a multicast, broadcast or IPv6 link-local address is judged.
TEST_F(HostInboundTest, LinkScope) {
    const Ipv6Addr fw_link_local = Ipv6Addr::parse("fe80::1");
    expect_dropped("IPv6 WAN → fe80::1 :22", from_wan6(fw_link_local).tcp(40000, 22).syn().build(), wan_if(),
                   kUntrust, kSsh);
    expect_accepted("IPv6 LAN → fe80::1 :22", from_lan6(fw_link_local).tcp(40000, 22).syn().build(), lan_if(),
                    kTrust, kSsh, STAT_PASS_LINK_LOCAL);
    Bytes mdns = PacketBuilder()
                     .eth(kWanHostMac, Mac::parse("01:00:5e:00:00:fb"))
                     .ipv4(kWanHost4, Ipv4Addr::parse("224.0.0.251"))
                     .udp(5353, 5353)
                     .build();
    expect_dropped("IPv4 mDNS to 224.0.0.251", mdns, wan_if(), kUntrust, HOST_SVC_OTHER);
    Bytes all_nodes_ping = PacketBuilder()
                               .eth(kWanHostMac, Mac::parse("33:33:00:00:00:01"))
                               .ipv6(kWanHost6, Ipv6Addr::parse("ff02::1"))
                               .icmpv6_echo_request(9, 1)
                               .build();
    expect_dropped("IPv6 echo to ff02::1", all_nodes_ping, wan_if(), kUntrust, kPing);
    Bytes igmp = PacketBuilder()
                     .eth(kWanHostMac, Mac::parse("01:00:5e:00:00:01"))
                     .ipv4(kWanHost4, Ipv4Addr::parse("224.0.0.1"))
                     .protocol(2)
                     .payload(Bytes{0x11, 0x64, 0xee, 0x9b, 0, 0, 0, 0})
                     .build();
    snapshot_stats();
    expect_fixture({"IGMP query", igmp, wan_if(), XDP_PASS, igmp});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_LINK_LOCAL));
    Bytes ns_frame = PacketBuilder()
                         .eth(kWanHostMac, Mac::parse("33:33:ff:00:00:01"))
                         .ipv6(kWanHost6, Ipv6Addr::parse("ff02::1:ff00:1"))
                         .hop_limit(255)
                         .icmpv6(135, 0, 0)
                         .payload(Bytes(kWanFw6.bytes.begin(), kWanFw6.bytes.end()))
                         .build();
    snapshot_stats();
    expect_fixture({"IPv6 neighbour solicitation from untrust", ns_frame, wan_if(), XDP_PASS, ns_frame});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_PASS_LINK_LOCAL));
}

// The first fragment is judged; the rest follow its verdict.
TEST_F(HostInboundTest, FragmentsFollowTheFirst) {
    auto ping = [&](bool lan, uint16_t id, uint16_t offset, bool more) {
        PacketBuilder b = lan ? from_lan4(kLanFw4Addr) : from_wan4(kWanFw4);
        b.ip_id(id).more_fragments(more).frag_offset(offset);
        if (offset == 0) b.icmp_echo_request(3, 1).payload_pattern(64);
        else b.protocol(proto::kIcmp).payload_pattern(64);
        return b.build();
    };
    expect_accepted("first fragment of a LAN ping", ping(true, 77, 0, true), lan_if(), kTrust, kPing);
    expect_accepted("its last fragment", ping(true, 77, 72, false), lan_if(), kTrust, HOST_SVC_FRAGMENT);
    expect_dropped("first fragment of a WAN ping", ping(false, 78, 0, true), wan_if(), kUntrust, kPing);
    snapshot_stats();
    expect_fixture({"its last fragment", ping(false, 78, 72, false), wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_DENIED));
}

// `all`, and a reload: the new generation's rules and counters take over at
// once.
TEST_F(HostInboundTest, ReloadAndAll) {
    Bytes ssh = from_wan4(kWanFw4).tcp(40000, 22).syn().build();
    expect_dropped("WAN :22 before", ssh, wan_if(), kUntrust, kSsh);
    std::string yaml = kHostInboundYaml;
    yaml.replace(yaml.find("untrust: {}"), 11, "untrust: { host-inbound: [all] }");
    ASSERT_TRUE(env_->apply(yaml).ok());
    EXPECT_EQ(hits(kUntrust, kSsh).second, 0u) << "counters start from zero with the new config";
    expect_accepted("WAN :22 with all", ssh, wan_if(), kUntrust, kSsh);
    expect_accepted("WAN :9999 with all", from_wan4(kWanFw4).udp(1, 9999).build(), wan_if(), kUntrust,
                    HOST_SVC_OTHER);
    ASSERT_TRUE(env_->apply(kHostInboundYaml).ok());
    expect_dropped("WAN :22 after", ssh, wan_if(), kUntrust, kSsh);
}

// Traffic through the firewall is not host-inbound's business.
TEST_F(HostInboundTest, ForwardedTrafficIsUntouched) {
    snapshot_stats();
    EXPECT_EQ(run(lan_to_wan4().tcp(40000, 22).syn().build(), lan_if()).retval, XDP_REDIRECT);
    EXPECT_EQ(stat_change(STAT_DROP_HOST_INBOUND), 0);
    EXPECT_EQ(stat_change(STAT_PASS_LOCAL), 0);
}

}  // namespace
}  // namespace sluice::test
