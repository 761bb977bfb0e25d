// What the randomized rule tests (policy_random_test.cpp, filter_random_test.cpp)
// share: a plain model of addresses, prefixes and port ranges (the references'
// matching, written without the compiler's code), the address fields of a rule
// and their YAML, first packets and their frames, and a generator of fields
// that overlap: prefixes nested around a few anchors, port ranges around a few
// anchor ports, addresses and ports at and next to their edges.
//
// Everything stays inside 198.18.0.0/15 and 2001:2::/48, the namespace of
// tests/support/netns_fixture.h. RandomRulesTest, at the end, is the frame of
// such a test: seed, rule sets applied as reloads of one datapath, packets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "datapath_env.h"
#include "packet_builder.h"

namespace sluice::test::random_rules {

// ------------------------------------------------------------ addresses

enum class Fam : uint8_t { v4, v6 };
using Addr = std::array<uint8_t, 16>;  // IPv4 uses bytes 0..3

int family_bits(Fam f);
int family_bytes(Fam f);
bool addr_bit(const Addr& a, int i);
void set_addr_bit(Addr& a, int i, bool on);
Addr v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d);
Addr parse_addr(Fam f, const char* text);
std::string addr_text(Fam f, const Addr& a);
// a + delta, modulo 2^(family width).
Addr addr_add(Fam f, Addr a, int64_t delta);
Ipv4Addr to4(const Addr& a);
Ipv6Addr to6(const Addr& a);

struct Prefix {
    Fam fam = Fam::v4;
    Addr addr{};  // host bits zero
    int len = 0;

    // The references' containment: the first `len` bits are equal.
    bool contains(Fam f, const Addr& x) const;
    Addr first() const { return addr; }
    Addr last() const;
    static Prefix of(Fam f, Addr a, int len);
};

// The namespace's subnets and the ranges every address of the tests stays in.
extern const Prefix kLan4, kWan4, kLan6, kWan6, kUniverse4, kUniverse6;
// Hosts with permanent neighbour entries: permitted packets to them are
// redirected, to any other address of the subnets passed (no neighbour).
extern const Addr kLanHostA4, kWanHostA4, kLanHostA6, kWanHostA6;

// Ingress points: trust = lan0, dmz = lan0 tagged 100, untrust = wan0.
enum Zone : int { kTrust = 0, kUntrust = 1, kDmz = 2, kZones = 3 };
extern const char* const kZoneNames[kZones];
constexpr uint16_t kDmzVlan = 100;

const Prefix& subnet(Fam f, Zone z);
const Prefix& universe(Fam f);
// The firewall's own addresses and the subnets' network / broadcast / anycast
// addresses go to the kernel, not to policy.
bool special_host(Fam f, const Addr& a, const Prefix& net);
// The zone a destination routes to, if it is a destination the datapath
// classifies (a non-special address of a connected subnet).
std::optional<Zone> routed_zone(Fam f, const Addr& dst);
bool usable_source(Fam f, const Addr& src);

// ------------------------------------------------------------ ports, protocols

struct PortRange {
    uint16_t lo = 0, hi = 0;
    bool contains(uint16_t port) const { return lo <= port && port <= hi; }
};
bool in_any(const std::vector<PortRange>& ranges, uint16_t port);

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kIcmpv6 = 58, kGre = 47;
// tcp, udp, icmp, icmpv6, or the number.
std::string protocol_text(uint8_t proto);

// ------------------------------------------------------------ address fields

// How a field is written: left out, `any`, a list, a list that also says `any`.
enum class Style : uint8_t { omitted, any_scalar, list, list_with_any };

struct AddrItem {
    int book = -1;      // >= 0: an address-book entry
    Prefix prefix;      // otherwise this prefix, inline
    bool bare = false;  // a full-length prefix written as a bare address
};

struct AddrMatch {
    Style style = Style::omitted;
    std::vector<AddrItem> items;
    bool is_any() const { return style != Style::list; }
};

using AddressBook = std::vector<std::vector<AddrItem>>;  // inline prefixes only

bool addresses_match(const AddressBook& book, const AddrMatch& m, Fam f, const Addr& a);
// Every prefix a match names, expanded through the address book, of family f.
std::vector<Prefix> prefixes_of(const AddressBook& book, const AddrMatch& m, Fam f);

// ------------------------------------------------------------ YAML

std::string prefix_text(const Prefix& p, bool bare);
std::string port_text(const PortRange& r);
// "80", "1000-2000" or "[80, 1000-2000]".
std::string port_set_text(const std::vector<PortRange>& ranges);
// `indent<key>: ...` and a newline; nothing for an omitted field.
void render_addr_field(std::ostringstream& y, const char* indent, const char* key, const AddrMatch& m);
// `address-book:` with entries ab0, ab1, ...
void render_address_book(std::ostringstream& y, const AddressBook& book);
// The three interfaces and zones, each interface with `extra` (", filter: f0")
// when given.
void render_interfaces(std::ostringstream& y, const std::array<std::string, kZones>& extra = {});

// ------------------------------------------------------------ packets

// A packet as the references see it.
struct Packet {
    Zone in = kTrust;
    Fam fam = Fam::v4;
    Addr src{}, dst{};
    uint8_t proto = kTcp;
    uint16_t dport = 0;     // tcp/udp
    uint16_t sport = 0;     // tcp/udp source port, ICMP echo identifier
    uint8_t icmp_type = 0;  // icmp/icmpv6
    Zone out() const { return *routed_zone(fam, dst); }
    bool echo_request() const {
        return (proto == kIcmp && icmp_type == 8) || (proto == kIcmpv6 && icmp_type == 128);
    }
    bool echo_reply() const { return (proto == kIcmp && icmp_type == 0) || (proto == kIcmpv6 && icmp_type == 129); }
    // The tuple's ports as the datapath keys them (session.h conventions).
    uint16_t key_sport() const;
    uint16_t key_dport() const;
};

// "IPv4 a -> b TCP SYN 1 -> 2, in on lan0 (zone trust -> untrust)"; the zone
// pair only for a routed destination.
std::string describe_packet(const Packet& p);
// The frame as the host of p.in sends it: TCP SYN (sequence `seq`), UDP with
// 12 bytes, ICMP/ICMPv6 (identifier sport) with 16, any other protocol 24.
Bytes build_frame(const Packet& p, const Mac& lan_mac, const Mac& wan_mac, uint32_t seq);
// The tuple in one direction, for "never reuse a flow".
std::string tuple_id(const Packet& p, bool reverse);

// An unsigned from the environment (decimal or 0x...), or the fallback.
uint64_t env_u64(const char* name, uint64_t fallback);

// ------------------------------------------------------------ generation

class FieldGenerator {
public:
    explicit FieldGenerator(uint64_t seed) : rng_(seed) {}

    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool chance(int percent) { return pick(0, 99) < percent; }
    template <typename T>
    const T& one_of(const std::vector<T>& v) {
        return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
    }

    // Starts a rule set: new anchors (the hosts with neighbours, a few random
    // addresses of the subnets and of the universe, anchor ports), and the
    // rule set's address book of 2..10 entries of 1..4 prefixes.
    AddressBook start_rule_set();

    Addr random_in(Fam f, const Prefix& p, bool low_bits_only = false);
    // An address of p: its first or last, next to them, or anywhere in it.
    Addr address_in(const Prefix& p);
    // Just outside p: first - 1 or last + 1 (maybe outside the universe).
    Addr next_to(const Prefix& p);
    Prefix random_prefix(Fam f);
    AddrItem inline_item(const Prefix& p);
    // A field's style and items (inline prefixes or address-book entries).
    Style match_style();
    AddrMatch random_match(const AddressBook& book);
    // The same anchor at nested lengths (/15 ⊃ /16 ⊃ /24 ⊃ /32, /48 ⊃ /64 ⊃
    // /128), most specific first or most general first.
    std::vector<Prefix> nested_prefixes();
    // A source address: anywhere in the universe or near an anchor.
    Addr random_source(Fam f);

    PortRange random_range();
    uint16_t port_in(const PortRange& r);
    uint16_t random_port();
    uint16_t source_port() { return static_cast<uint16_t>(pick(1024, 65535)); }

    // p's protocol and "port" (TCP/UDP destination port, ICMP type); a fresh source port.
    void set_l4(Packet& p, uint8_t proto, uint16_t port);
    // Any protocol: TCP, UDP, ICMP echo, other ICMP messages, GRE.
    void random_l4(Packet& p);

protected:
    std::mt19937_64 rng_;
    std::vector<Addr> anchors4_, anchors6_;
    std::vector<uint16_t> port_anchors_;
};

// ------------------------------------------------------------ the test frame

// Rule sets generated from one seed, each applied to one datapath the way
// `sluice reload` does and checked with packets. The seed, and the one rule
// set to run when reproducing a failure, come from SLUICE_<NAME>_SEED and
// SLUICE_<NAME>_ONLY. Skips like every DatapathTest.
class RandomRulesTest : public DatapathTest {
protected:
    // The random rule sets fill the classifier's sparse table past the cap.
    bool cap_state_maps() const override { return false; }
    void use_environment(const std::string& name, uint64_t default_seed);
    uint64_t seed() const { return seed_; }
    // Whether one rule set alone runs (the run's minimums do not apply).
    bool only_one() const { return only_ >= 0; }
    bool selected(int set) const { return only_ < 0 || set == only_; }
    // The generator's seed for rule set `set`.
    uint64_t set_seed(int set) const { return seed_ * 1000003u + static_cast<uint64_t>(set); }
    // "seed S rule set N", and the environment that runs that rule set alone.
    std::string where(int set) const;
    std::string reproduce(int set) const;

    // Applies rule set `set` compiled with grouping_of(set): odd ones with
    // their rules split into groups by shape (maps/policy.h), half of those
    // with every cross table sparse, so that the merge of several groups'
    // results and the sparse lookups are checked as well as the single group
    // of dense tables used whenever the rules fit in one. Then no session or
    // flow-cache entry is left. *groups: groups in use.
    static ClassifierGrouping grouping_of(int set);
    ::testing::AssertionResult apply_rule_set(int set, const std::string& yaml, uint32_t* groups);
    void clear_flows();

    Bytes frame_of(const Packet& p, uint32_t seq) const { return build_frame(p, lan_mac(), wan_mac(), seq); }
    uint32_t ingress_of(const Packet& p) const { return p.in == kUntrust ? wan_if() : lan_if(); }
    // The YAML of a rule set some packets disagree on (of the first two such sets).
    void show_rule_set(int set, size_t disagreements, size_t packets, const std::string& yaml);
    // Prints the run's summary and checks what every such run must show: no
    // disagreement and, unless one rule set ran alone, at least `min_packets`
    // packets and a quarter of the rule sets split into groups. Whether the
    // whole run ran (so that the test's own minimums apply).
    bool check_run(const std::string& summary, size_t disagreements, size_t packets, size_t min_packets,
                   size_t grouped_sets, int rule_sets);

private:
    std::string name_;
    uint64_t seed_ = 0;
    int only_ = -1;
    int shown_ = 0;
};

}  // namespace sluice::test::random_rules
