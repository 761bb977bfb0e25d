// Address translation under BPF_PROG_TEST_RUN. NatTest is the fixture: a
// config with a permit policy towards the inside host (so destination NAT has
// something to reach), to which each test adds its NAT rules as an operator
// writes them (the `nat:` section of docs/config.md), applied through the
// real pipeline: parse_config → compiler::compile → Datapath::apply.
//
//   ASSERT_TRUE(apply_nat(R"yaml(
//   nat:
//     source: [ { name: lan-out, from: trust, to: untrust, translate: interface } ]
//   )yaml"));
//
// The one NAT map that is not config, nat_ifaddrs (the interface addresses
// `translate: interface` takes), is written as the daemon writes it, with the
// loader's write_nat_ifaddrs over the addresses the namespace has.
//
// Also: an independent one's-complement sum for the checks (not the builder's,
// not the verifier's), an RFC 6296 address mapping written from the RFC, a
// tc_egress_prog runner, and ICMP-error inner-packet extraction.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datapath_env.h"
#include "loader/nat_ifaddrs.h"

extern "C" {
#include "map_names.h"
#include "nat.h"
}

namespace sluice::test {

// An IPv6 prefix, for the test's own RFC 6296 mapping (nptv6_map).
struct Ipv6Prefix {
    std::array<uint8_t, 16> addr{};
    uint8_t len = 0;

    static Ipv6Prefix of(const Ipv6Addr& a, uint8_t len);
    // As a config writes it: "2001:2:0:1::/64".
    std::string str() const;
};

// The NAT rules most tests need, as an operator writes them (NatTest::apply_nat).
// Masquerade: LAN flows to the WAN leave with wan0's address.
extern const char* const kLanOutInterfaceYaml;
// Port forwards on wan0's address (both families) to the LAN host: TCP 8080
// to its web server (80), UDP 5353 to its DNS server (53).
extern const char* const kPortForwardsYaml;

// ---- independent checks ----

// RFC 1071 sum of big-endian 16-bit words, folded, not complemented.
uint16_t ones_sum(const uint8_t* data, size_t len, uint32_t initial = 0);
// The pseudo-header sum of the frame's TCP/UDP segment, folded, not
// complemented: what a CHECKSUM_PARTIAL packet carries in its checksum field.
uint16_t pseudo_header_sum(const Bytes& frame);
// The frame with its (partial) TCP/UDP checksum completed the way the kernel
// or NIC completes CHECKSUM_PARTIAL: sum from the L4 header to the end,
// field included, complemented into the field.
Bytes complete_partial_checksum(const Bytes& frame);
// The L4 checksum field (network order value) of a parsed TCP/UDP/ICMP frame.
uint16_t l4_checksum_field(const Bytes& frame);

// RFC 6296 section 3: the address with inside's prefix replaced by outside's,
// adjusted so that its one's-complement sum is unchanged.
Ipv6Addr nptv6_map(const Ipv6Addr& addr, const Ipv6Prefix& inside, const Ipv6Prefix& outside);

// The packet an ICMP/ICMPv6 error quotes, as a frame of its own (a made-up
// Ethernet header in front), so parse_frame/verify_checksums can read it.
std::optional<Bytes> quoted_frame(const Bytes& error_frame);

// Runs tc_egress_prog on an skb leaving through ifindex.
struct TcRunResult {
    int retval = -1;
    Bytes output;
};
Result<TcRunResult> run_tc(int prog_fd, const Bytes& frame, uint32_t ifindex);

// ---- flows ----

// The L4 of a test flow: TCP (SYN, then SYN-ACK), UDP, or ICMP/ICMPv6 echo
// (the identifier plays the client port; there is no server port).
enum class L4Kind { tcp, udp, echo };
const char* l4_name(L4Kind k);
uint8_t l4_protocol(L4Kind k, bool v6);
// Client → server packet (client port / echo id `cport`, server port `sport`).
Bytes request(PacketBuilder b, L4Kind k, bool v6, uint16_t cport, uint16_t sport);
// Server → client packet answering it.
Bytes response(PacketBuilder b, L4Kind k, bool v6, uint16_t sport, uint16_t cport);
// Source port (echo request: identifier) / destination port (echo reply:
// identifier) of a frame, read with the independent parser.
uint16_t frame_sport(const Bytes& frame);
uint16_t frame_dport(const Bytes& frame);
// Session key ports of a request (echo: id, 0) and a response (echo: 0, id).
std::pair<uint16_t, uint16_t> request_ports(L4Kind k, uint16_t cport, uint16_t sport);
std::pair<uint16_t, uint16_t> response_ports(L4Kind k, uint16_t sport, uint16_t cport);

// ---- fixture ----

class NatTest : public DatapathTest {
protected:
    std::string config_yaml() const override;
    void SetUp() override;

    // Applies the fixture's config with `nat_yaml` added (the test's `nat:`
    // section, and an `address-book:` if its rules name entries) the way
    // `sluice reload` does (DatapathEnv::apply); then, as the daemon does
    // after every apply, writes nat_ifaddrs from the namespace's addresses;
    // then snapshots the counters.
    ::testing::AssertionResult apply_nat(const std::string& nat_yaml);
    // The fixture's config with `nat_yaml` added, for a test that drives the
    // loader itself.
    std::string with_nat(const std::string& nat_yaml) const { return config_yaml() + nat_yaml; }

    // nat_ifaddrs as the daemon writes it (loader write_nat_ifaddrs) for lan0
    // and wan0, from `addresses` as netlink lists them: by default the
    // namespace's own, or only those of one family (AF_INET / AF_INET6).
    // Every address gets the daemon's port range, kIfaddrPortFirst-kIfaddrPortLast.
    ::testing::AssertionResult write_interface_addresses(const std::vector<InterfaceAddress>& addresses);
    std::vector<InterfaceAddress> namespace_addresses(int only_family = AF_UNSPEC);

    // Addresses by family (text): the topology's hosts, wan0's own address
    // (interface source NAT), a router on the WAN side.
    static std::string lan_host(bool v6) { return v6 ? NetnsFixture::kLanHost6 : NetnsFixture::kLanHost4; }
    static std::string wan_host(bool v6) { return v6 ? NetnsFixture::kWanHost6 : NetnsFixture::kWanHost4; }
    static std::string wan_addr(bool v6) { return v6 ? NetnsFixture::kWanAddr6 : NetnsFixture::kWanAddr4; }
    static std::string wan_router(bool v6) { return v6 ? "2001:2:0:100::254" : "198.18.100.254"; }

    // Frames arriving from the LAN/WAN host (TTL 64), and leaving to them as
    // the firewall forwards (MACs rewritten, TTL 63).
    PacketBuilder from_lan(bool v6, std::string_view src, std::string_view dst) const;
    PacketBuilder from_wan(bool v6, std::string_view src, std::string_view dst) const;
    PacketBuilder to_lan(bool v6, std::string_view src, std::string_view dst) const;
    PacketBuilder to_wan(bool v6, std::string_view src, std::string_view dst) const;

    std::optional<session_value> session(bool v6, std::string_view src, std::string_view dst, uint16_t sport,
                                         uint16_t dport, uint8_t protocol);
    // nat_ports: the reservation of one translated (address, port), and how many there are.
    std::optional<nat_port_value> reservation(bool v6, std::string_view addr, uint16_t port, uint8_t protocol);
    size_t reservations();

    // Runs the frame, expects the verdict and, when given, exactly `expected`
    // as output, and (unless verify is false) that every checksum of the
    // output verifies.
    XdpRunResult expect_nat(const std::string& what, const Bytes& in, uint32_t ifindex, int verdict,
                            const std::optional<Bytes>& expected, bool verify = true);

    // Zone ids the compiler gave trust (lan0) and untrust (wan0).
    uint16_t trust_ = 0, untrust_ = 0;
};

// An address held in __be32[4] (IPv4 in word 0) as text.
std::string addr_text(const __be32* a, bool v6);
// A host-order port held in network order.
inline uint16_t port_of(__be16 p) {
    return static_cast<uint16_t>((p & 0xff) << 8 | p >> 8);
}

}  // namespace sluice::test
