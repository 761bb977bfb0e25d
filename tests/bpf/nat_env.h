// Address translation under BPF_PROG_TEST_RUN: the NatTest fixture (a config
// with a permit policy towards the inside host, so destination NAT has
// something to reach) and NatTables, which writes the NAT rule maps directly
// for the active policy generation, the way the controller's NAT compiler
// will (maps/nat.h).
//
//   NatTables nat(*env_);
//   nat.source_interface(0, nat.zone(lan_if()), nat.zone(wan_if()));
//   nat.ifaddr(wan_if(), kNat4, kNat6, 20000, 29999);
//
// Also: an independent one's-complement sum for the checks (not the builder's,
// not the verifier's), an RFC 6296 address mapping written from the RFC, a
// tc_egress_prog runner, and ICMP-error inner-packet extraction.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datapath_env.h"

extern "C" {
#include "map_names.h"
#include "nat.h"
#include "policy.h"
#include "runtime_config.h"
#include "zone.h"
}

namespace sluice::test {

// A prefix of either family; addresses are kept in 16 bytes (IPv4 in the first 4).
struct NatPrefix {
    uint8_t family = SLUICE_FAMILY_IPV4;
    std::array<uint8_t, 16> addr{};
    uint8_t len = 0;

    static NatPrefix v4(const Ipv4Addr& a, uint8_t len = 32);
    static NatPrefix v6(const Ipv6Addr& a, uint8_t len = 128);
    static NatPrefix any4() { return v4(Ipv4Addr{}, 0); }
    static NatPrefix any6() { return v6(Ipv6Addr{}, 0); }
    bool covers(const NatPrefix& other) const;
    bool operator<(const NatPrefix& o) const;
};

struct NatPoolSpec {
    uint8_t family = SLUICE_FAMILY_IPV4;
    // (first address, count) ranges; IPv4 in the first 4 bytes.
    std::vector<std::pair<std::array<uint8_t, 16>, uint32_t>> ranges;
    uint16_t port_first = 1024, port_last = 65535;
    bool persistent = false;
};

class NatTables {
public:
    explicit NatTables(const DatapathEnv& env);

    uint8_t generation() const { return gen_; }
    // Writes further rules for another generation (e.g. the inactive one).
    void use_generation(uint8_t gen) { gen_ = gen & 1; }
    // Zone id of an untagged interface, from the zones map.
    uint16_t zone(uint32_t ifindex) const;

    // nat.destination: (zone, protocol, address, port) → (address, port).
    // protocol 0 = any (then port must be 0); port 0 = any port; to_port 0 = keep.
    void destination(uint16_t zone_in, uint8_t protocol, const Ipv4Addr& addr, uint16_t port, const Ipv4Addr& to,
                     uint16_t to_port, uint32_t rule_id = 0);
    void destination(uint16_t zone_in, uint8_t protocol, const Ipv6Addr& addr, uint16_t port, const Ipv6Addr& to,
                     uint16_t to_port, uint32_t rule_id = 0);

    // nat.static (both directions) and nat.nptv6: inside/outside of equal length.
    void static_map(const NatPrefix& inside, const NatPrefix& outside, uint32_t rule_id = 0);
    void nptv6(const NatPrefix& inside, const NatPrefix& outside, uint32_t rule_id = 0);

    // nat.source rule at bit `bit` (config order): its zone pair, sources and
    // destinations (any = NatPrefix::any4()/any6(); a family appears only
    // where listed), translating to the egress interface or to pool `pool`.
    void source_interface(int bit, uint16_t from_zone, uint16_t to_zone,
                          std::vector<NatPrefix> sources = {NatPrefix::any4(), NatPrefix::any6()},
                          std::vector<NatPrefix> destinations = {NatPrefix::any4(), NatPrefix::any6()},
                          uint32_t rule_id = 0);
    void source_pool(int bit, uint16_t from_zone, uint16_t to_zone, uint16_t pool,
                     std::vector<NatPrefix> sources = {NatPrefix::any4(), NatPrefix::any6()},
                     std::vector<NatPrefix> destinations = {NatPrefix::any4(), NatPrefix::any6()},
                     uint32_t rule_id = 0);
    void pool(uint16_t index, const NatPoolSpec& spec);

    // nat_ifaddrs: the address interface source NAT uses on ifindex.
    void ifaddr(uint32_t ifindex, std::optional<Ipv4Addr> v4, std::optional<Ipv6Addr> v6, uint16_t port_first,
                uint16_t port_last);

    // nat_ports.
    std::optional<nat_port_value> reservation(const Ipv4Addr& addr, uint16_t port, uint8_t protocol) const;
    std::optional<nat_port_value> reservation(const Ipv6Addr& addr, uint16_t port, uint8_t protocol) const;
    size_t reservations() const;

private:
    void destination_bytes(uint16_t zone_in, uint8_t protocol, const uint8_t* addr, const uint8_t* to, size_t len,
                           uint16_t port, uint16_t to_port, uint32_t rule_id);
    std::optional<nat_port_value> reservation_bytes(const uint8_t* addr, size_t len, uint16_t port,
                                                    uint8_t protocol) const;
    void prefix_rule(bool inbound, const NatPrefix& from, const NatPrefix& to, uint8_t kind, uint32_t rule_id);
    void source_rule(int bit, uint16_t from_zone, uint16_t to_zone, const nat_source_rule& rule,
                     const std::vector<NatPrefix>& sources, const std::vector<NatPrefix>& destinations);
    void write_rule_bits(const char* map, std::map<NatPrefix, uint64_t>& table, const NatPrefix& p, uint64_t bit);
    int fd(const char* name) const;

    const DatapathEnv& env_;
    uint8_t gen_ = 0;
    std::map<std::pair<uint16_t, uint16_t>, uint64_t> zone_bits_;
    std::map<NatPrefix, uint64_t> s4_, s6_, d4_, d6_;
};

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
Ipv6Addr nptv6_map(const Ipv6Addr& addr, const NatPrefix& inside, const NatPrefix& outside);

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
    std::optional<nat_port_value> reservation(bool v6, std::string_view addr, uint16_t port, uint8_t protocol);

    // Runs the frame, expects the verdict and, when given, exactly `expected`
    // as output, and (unless verify is false) that every checksum of the
    // output verifies.
    XdpRunResult expect_nat(const std::string& what, const Bytes& in, uint32_t ifindex, int verdict,
                            const std::optional<Bytes>& expected, bool verify = true);

    std::unique_ptr<NatTables> nat_;
    uint16_t trust_ = 0, untrust_ = 0;
};

// An address held in __be32[4] (IPv4 in word 0) as text.
std::string addr_text(const __be32* a, bool v6);
// A host-order port held in network order.
inline uint16_t port_of(__be16 p) {
    return static_cast<uint16_t>((p & 0xff) << 8 | p >> 8);
}

}  // namespace sluice::test
