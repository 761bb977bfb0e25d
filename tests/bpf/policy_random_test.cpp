// The winning policy of the real XDP datapath, against an independent
// reference: random rule sets (nested IPv4/IPv6 prefixes, overlapping port
// ranges, address books mixing families, tcp/udp/icmp/icmpv6 applications,
// `any` fields, three zones, permit/deny/reject and every default action) are
// rendered as YAML, parsed, compiled and applied the way the daemon does it,
// and every packet's outcome — XDP verdict, plus the policy id the session
// (permit) or the flow cache (deny, reject) recorded — must be the one a plain
// linear first-match scan of the same rules, written below and sharing no code
// with userspace/compiler, predicts.
//
// Every packet is the first packet of its flow: tuples are never reused within
// a rule set (in either direction), and the session and flow-cache maps are
// cleared between rule sets. One namespace and one loaded datapath serve all
// rule sets; each rule set is a config reload (which also alternates the
// policy generation the classifier reads). Odd rule sets are compiled with
// their rules split into groups by shape (maps/policy.h), so the merge of
// several groups' results is checked as well as the single group sluice
// uses whenever the rules fit in one.
//
// Reproduce a failure: the message names the seed and the rule set;
//   SLUICE_POLICY_RANDOM_SEED=<seed> SLUICE_POLICY_RANDOM_ONLY=<rule set>
//     build/tests/sluice_bpf_tests --gtest_filter='PolicyRandom.*'
// runs that rule set alone (same packets), and the message prints the YAML.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "datapath_env.h"
#include "flow_cache_reader.h"

#if __has_include("loader/datapath.h") && __has_include("compiler/compile.h") && \
    __has_include("config/load_config.h")
#define SLUICE_POLICY_RANDOM_HAVE_DATAPATH 1
#include "compiler/compile.h"
#include "config/load_config.h"
#include "loader/datapath.h"
#else
#define SLUICE_POLICY_RANDOM_HAVE_DATAPATH 0
#endif

extern "C" {
#include "map_names.h"
#include "policy.h"
#include "session.h"
#include "zone.h"
}

namespace sluice::test {
namespace {

// ------------------------------------------------------------------ the model

enum class Fam : uint8_t { v4, v6 };
using Addr = std::array<uint8_t, 16>;  // IPv4 uses bytes 0..3

int family_bits(Fam f) { return f == Fam::v4 ? 32 : 128; }
int family_bytes(Fam f) { return f == Fam::v4 ? 4 : 16; }

bool addr_bit(const Addr& a, int i) { return (a[static_cast<size_t>(i / 8)] >> (7 - i % 8)) & 1; }

void set_addr_bit(Addr& a, int i, bool on) {
    uint8_t m = static_cast<uint8_t>(1u << (7 - i % 8));
    if (on) a[static_cast<size_t>(i / 8)] |= m;
    else a[static_cast<size_t>(i / 8)] &= static_cast<uint8_t>(~m);
}

Addr v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) { return Addr{a, b, c, d}; }

Addr parse_addr(Fam f, const char* text) {
    Addr a{};
    int rc = inet_pton(f == Fam::v4 ? AF_INET : AF_INET6, text, a.data());
    if (rc != 1) throw std::runtime_error(std::string("bad address ") + text);
    return a;
}

std::string addr_text(Fam f, const Addr& a) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(f == Fam::v4 ? AF_INET : AF_INET6, a.data(), buf, sizeof buf);
    return buf;
}

// a + delta, modulo 2^(family width): two's complement, byte by byte.
Addr addr_add(Fam f, Addr a, int64_t delta) {
    const uint64_t d = static_cast<uint64_t>(delta);
    unsigned carry = 0;
    for (int i = family_bytes(f) - 1, k = 0; i >= 0; --i, ++k) {
        unsigned byte = k < 8 ? static_cast<unsigned>((d >> (8 * k)) & 0xff) : (delta < 0 ? 0xffu : 0u);
        unsigned sum = a[static_cast<size_t>(i)] + byte + carry;
        a[static_cast<size_t>(i)] = static_cast<uint8_t>(sum & 0xff);
        carry = sum >> 8;
    }
    return a;
}

struct Prefix {
    Fam fam = Fam::v4;
    Addr addr{};  // host bits zero
    int len = 0;

    // The reference's containment: the first `len` bits are equal.
    bool contains(Fam f, const Addr& x) const {
        if (f != fam) return false;
        for (int i = 0; i < len; ++i)
            if (addr_bit(addr, i) != addr_bit(x, i)) return false;
        return true;
    }
    Addr first() const { return addr; }
    Addr last() const {
        Addr a = addr;
        for (int i = len; i < family_bits(fam); ++i) set_addr_bit(a, i, true);
        return a;
    }
    static Prefix of(Fam f, Addr a, int len) {
        for (int i = len; i < 128; ++i) set_addr_bit(a, i, false);
        if (f == Fam::v4) std::fill(a.begin() + 4, a.end(), 0);
        return Prefix{f, a, len};
    }
};

// The namespace's subnets (tests/support/netns_fixture.h) and the ranges every
// address of this test stays in.
const Prefix kLan4 = Prefix::of(Fam::v4, v4(198, 18, 1, 0), 24);
const Prefix kWan4 = Prefix::of(Fam::v4, v4(198, 18, 100, 0), 24);
const Prefix kLan6 = Prefix::of(Fam::v6, parse_addr(Fam::v6, "2001:2:0:1::"), 64);
const Prefix kWan6 = Prefix::of(Fam::v6, parse_addr(Fam::v6, "2001:2:0:100::"), 64);
const Prefix kUniverse4 = Prefix::of(Fam::v4, v4(198, 18, 0, 0), 15);
const Prefix kUniverse6 = Prefix::of(Fam::v6, parse_addr(Fam::v6, "2001:2::"), 48);
// Hosts with permanent neighbour entries: permitted packets to them are
// redirected, to any other address of the subnets passed (no neighbour).
const Addr kLanHostA4 = v4(198, 18, 1, 10), kWanHostA4 = v4(198, 18, 100, 200);
const Addr kLanHostA6 = parse_addr(Fam::v6, "2001:2:0:1::10");
const Addr kWanHostA6 = parse_addr(Fam::v6, "2001:2:0:100::200");

enum Zone : int { kTrust = 0, kUntrust = 1, kDmz = 2, kZones = 3 };
const char* const kZoneNames[kZones] = {"trust", "untrust", "dmz"};
constexpr uint16_t kDmzVlan = 100;  // lan0.100: tagged frames on lan0

const Prefix& subnet(Fam f, Zone z) {
    if (f == Fam::v4) return z == kTrust ? kLan4 : kWan4;
    return z == kTrust ? kLan6 : kWan6;
}
const Prefix& universe(Fam f) { return f == Fam::v4 ? kUniverse4 : kUniverse6; }

// The firewall's own addresses and the subnets' network / broadcast / anycast
// addresses go to the kernel, not to policy; the test avoids them.
bool special_host(Fam f, const Addr& a, const Prefix& net) {
    Addr host_part{};
    for (int i = net.len; i < family_bits(f); ++i) set_addr_bit(host_part, i, addr_bit(a, i));
    Addr zero{};
    Addr one = addr_add(f, zero, 1);
    if (host_part == zero || host_part == one) return true;
    return f == Fam::v4 && a[3] == 255;
}

// The zone a destination routes to, if it is a destination the datapath
// classifies (a non-special address of a connected subnet).
std::optional<Zone> routed_zone(Fam f, const Addr& dst) {
    for (Zone z : {kTrust, kUntrust}) {
        const Prefix& net = subnet(f, z);
        if (net.contains(f, dst)) return special_host(f, dst, net) ? std::nullopt : std::optional<Zone>(z);
    }
    return std::nullopt;
}

bool usable_source(Fam f, const Addr& src) {
    if (!universe(f).contains(f, src)) return false;
    for (Zone z : {kTrust, kUntrust})
        if (subnet(f, z).contains(f, src) && special_host(f, src, subnet(f, z))) return false;
    return true;
}

struct PortRange {
    uint16_t lo = 0, hi = 0;
};

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kIcmpv6 = 58, kGre = 47;

struct App {
    uint8_t proto = kTcp;              // tcp, udp, icmp, icmpv6
    std::vector<PortRange> ports;      // tcp/udp only; empty = every port
};

enum class Style : uint8_t { omitted, any_scalar, list, list_with_any };

struct AddrItem {
    int book = -1;  // >= 0: an address-book entry
    Prefix prefix;  // otherwise this prefix, inline
    bool bare = false;  // a full-length prefix written as a bare address
};

struct AddrMatch {
    Style style = Style::omitted;
    std::vector<AddrItem> items;
    bool is_any() const { return style != Style::list; }
};

struct AppMatch {
    Style style = Style::omitted;
    std::vector<int> apps;
    bool is_any() const { return style != Style::list; }
};

enum class Action : uint8_t { permit, deny, reject };
const char* action_name(Action a) { return a == Action::permit ? "permit" : a == Action::deny ? "deny" : "reject"; }

struct Rule {
    Zone from = kTrust, to = kUntrust;
    AddrMatch src, dst;
    AppMatch app;
    Action action = Action::permit;
};

struct RuleSet {
    std::vector<std::vector<AddrItem>> book;  // inline prefixes only
    std::vector<App> apps;
    std::vector<Rule> rules;
    Action default_action = Action::deny;
};

// A first packet, as the reference sees it.
struct Packet {
    Zone in = kTrust;  // trust: lan0, dmz: lan0 tagged 100, untrust: wan0
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
    uint16_t key_sport() const {
        if (proto == kTcp || proto == kUdp) return sport;
        return echo_request() ? sport : 0;
    }
    uint16_t key_dport() const {
        if (proto == kTcp || proto == kUdp) return dport;
        return echo_reply() ? sport : 0;
    }
};

// ---------------------------------------------------------- the reference

bool addresses_match(const RuleSet& rs, const AddrMatch& m, Fam f, const Addr& a) {
    if (m.is_any()) return true;
    for (const AddrItem& item : m.items) {
        if (item.book < 0) {
            if (item.prefix.contains(f, a)) return true;
            continue;
        }
        for (const AddrItem& p : rs.book[static_cast<size_t>(item.book)])
            if (p.prefix.contains(f, a)) return true;
    }
    return false;
}

// config.md: `protocol: icmp` is echo in ICMP and ICMPv6 alike; icmpv6 is
// ICMPv6 echo; tcp/udp match their destination ports (none listed = all).
bool application_matches(const App& app, const Packet& p) {
    switch (app.proto) {
    case kIcmp:
        return (p.fam == Fam::v4 && p.proto == kIcmp && p.icmp_type == 8) ||
               (p.fam == Fam::v6 && p.proto == kIcmpv6 && p.icmp_type == 128);
    case kIcmpv6:
        return p.fam == Fam::v6 && p.proto == kIcmpv6 && p.icmp_type == 128;
    default:
        if (p.proto != app.proto) return false;
        if (app.ports.empty()) return true;
        for (const PortRange& r : app.ports)
            if (r.lo <= p.dport && p.dport <= r.hi) return true;
        return false;
    }
}

bool rule_matches(const RuleSet& rs, const Rule& r, const Packet& p) {
    if (r.from != p.in || r.to != p.out()) return false;
    if (!addresses_match(rs, r.src, p.fam, p.src)) return false;
    if (!addresses_match(rs, r.dst, p.fam, p.dst)) return false;
    if (r.app.is_any()) return true;
    for (int a : r.app.apps)
        if (application_matches(rs.apps[static_cast<size_t>(a)], p)) return true;
    return false;
}

// Linear first match: the index of the winning rule, or nullopt (default).
std::optional<size_t> reference_winner(const RuleSet& rs, const Packet& p) {
    for (size_t i = 0; i < rs.rules.size(); ++i)
        if (rule_matches(rs, rs.rules[i], p)) return i;
    return std::nullopt;
}

// How many rules match, and whether a later match has another action than
// the first (so that the order of the rules decides the verdict).
struct Matches {
    size_t count = 0;
    bool order_decides_action = false;
};

Matches all_matches(const RuleSet& rs, const Packet& p) {
    Matches m;
    std::optional<Action> first;
    for (const Rule& r : rs.rules) {
        if (!rule_matches(rs, r, p)) continue;
        ++m.count;
        if (!first) first = r.action;
        else if (r.action != *first) m.order_decides_action = true;
    }
    return m;
}

// ---------------------------------------------------------------- rendering

std::string prefix_text(const Prefix& p, bool bare) {
    std::string s = addr_text(p.fam, p.addr);
    if (!(bare && p.len == family_bits(p.fam))) s += "/" + std::to_string(p.len);
    return p.fam == Fam::v6 ? "\"" + s + "\"" : s;
}

std::string item_text(const AddrItem& item) {
    return item.book >= 0 ? "ab" + std::to_string(item.book) : prefix_text(item.prefix, item.bare);
}

std::string port_text(const PortRange& r) {
    return r.lo == r.hi ? std::to_string(r.lo) : std::to_string(r.lo) + "-" + std::to_string(r.hi);
}

const char* proto_text(uint8_t proto) {
    switch (proto) {
    case kTcp: return "tcp";
    case kUdp: return "udp";
    case kIcmp: return "icmp";
    case kIcmpv6: return "icmpv6";
    default: return "?";
    }
}

void render_addr_field(std::ostringstream& y, const char* key, const AddrMatch& m) {
    if (m.style == Style::omitted) return;
    y << "    " << key << ": ";
    if (m.style == Style::any_scalar) {
        y << "any\n";
        return;
    }
    y << "[";
    bool first = true;
    if (m.style == Style::list_with_any) {
        y << "any";
        first = false;
    }
    for (const AddrItem& item : m.items) {
        y << (first ? "" : ", ") << item_text(item);
        first = false;
    }
    y << "]\n";
}

std::string render_yaml(const RuleSet& rs) {
    std::ostringstream y;
    y << "interfaces:\n"
         "  lan0: { zone: trust }\n"
         "  lan0.100: { zone: dmz }\n"
         "  wan0: { zone: untrust }\n"
         "zones:\n"
         "  trust: {}\n"
         "  untrust: {}\n"
         "  dmz: {}\n";
    y << "address-book:\n";
    for (size_t i = 0; i < rs.book.size(); ++i) {
        y << "  ab" << i << ": [";
        for (size_t j = 0; j < rs.book[i].size(); ++j)
            y << (j ? ", " : "") << prefix_text(rs.book[i][j].prefix, rs.book[i][j].bare);
        y << "]\n";
    }
    y << "applications:\n";
    for (size_t i = 0; i < rs.apps.size(); ++i) {
        const App& a = rs.apps[i];
        y << "  app" << i << ": { protocol: " << proto_text(a.proto);
        if (!a.ports.empty()) {
            y << ", destination-port: ";
            if (a.ports.size() == 1) {
                y << port_text(a.ports[0]);
            } else {
                y << "[";
                for (size_t j = 0; j < a.ports.size(); ++j) y << (j ? ", " : "") << port_text(a.ports[j]);
                y << "]";
            }
        }
        y << " }\n";
    }
    y << "policies:\n";
    for (size_t i = 0; i < rs.rules.size(); ++i) {
        const Rule& r = rs.rules[i];
        y << "  - name: r" << i << "\n"
          << "    from: " << kZoneNames[r.from] << "\n"
          << "    to: " << kZoneNames[r.to] << "\n";
        render_addr_field(y, "source", r.src);
        render_addr_field(y, "destination", r.dst);
        if (r.app.style == Style::any_scalar) {
            y << "    application: any\n";
        } else if (r.app.style != Style::omitted) {
            y << "    application: [";
            bool first = true;
            if (r.app.style == Style::list_with_any) {
                y << "any";
                first = false;
            }
            for (int a : r.app.apps) {
                y << (first ? "" : ", ") << "app" << a;
                first = false;
            }
            y << "]\n";
        }
        y << "    action: " << action_name(r.action) << "\n";
    }
    y << "default-action: " << action_name(rs.default_action) << "\n";
    return y.str();
}

std::string describe_packet(const Packet& p) {
    std::ostringstream s;
    s << (p.fam == Fam::v4 ? "IPv4 " : "IPv6 ") << addr_text(p.fam, p.src) << " -> " << addr_text(p.fam, p.dst)
      << " ";
    switch (p.proto) {
    case kTcp: s << "TCP SYN " << p.sport << " -> " << p.dport; break;
    case kUdp: s << "UDP " << p.sport << " -> " << p.dport; break;
    case kIcmp:
    case kIcmpv6:
        s << (p.proto == kIcmp ? "ICMP" : "ICMPv6") << " type " << int(p.icmp_type) << " id " << p.sport;
        break;
    default: s << "protocol " << int(p.proto); break;
    }
    s << ", in on " << (p.in == kTrust ? "lan0" : p.in == kDmz ? "lan0 vlan 100" : "wan0") << " (zone "
      << kZoneNames[p.in] << " -> " << kZoneNames[p.out()] << ")";
    return s.str();
}

// ---------------------------------------------------------------- generation

class Generator {
public:
    explicit Generator(uint64_t seed) : rng_(seed) {}

    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool chance(int percent) { return pick(0, 99) < percent; }
    template <typename T>
    const T& one_of(const std::vector<T>& v) { return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))]; }

    // ---- rule sets

    RuleSet rule_set(int rules, Action default_action) {
        anchors4_ = {kLanHostA4, kWanHostA4};
        anchors6_ = {kLanHostA6, kWanHostA6};
        for (int i = 0; i < 4; ++i) {
            anchors4_.push_back(random_in(Fam::v4, kLan4));
            anchors4_.push_back(random_in(Fam::v4, kWan4));
            anchors4_.push_back(random_in(Fam::v4, kUniverse4));
            anchors6_.push_back(random_in(Fam::v6, kLan6, chance(50)));
            anchors6_.push_back(random_in(Fam::v6, kWan6, chance(50)));
            anchors6_.push_back(random_in(Fam::v6, kUniverse6, chance(30)));
        }
        port_anchors_ = {1, 22, 53, 80, 443, 1000, 1500, 1550, 2000, 8080, 65535};
        for (int i = 0; i < 4; ++i) port_anchors_.push_back(static_cast<uint16_t>(pick(1, 65535)));

        RuleSet rs;
        rs.default_action = default_action;
        for (int i = pick(2, 10); i > 0; --i) {
            std::vector<AddrItem> entry;
            for (int j = pick(1, 4); j > 0; --j) entry.push_back(inline_item(random_prefix(chance(55) ? Fam::v4 : Fam::v6)));
            rs.book.push_back(entry);
        }
        // Apps: random ones plus, often, the nested trio 1000-2000 / 1500-1600 / 1550.
        if (chance(60)) {
            uint8_t proto = chance(50) ? kTcp : kUdp;
            rs.apps.push_back(App{proto, {{1000, 2000}}});
            rs.apps.push_back(App{proto, {{1500, 1600}}});
            rs.apps.push_back(App{proto, {{1550, 1550}}});
        }
        for (int i = pick(4, 14); i > 0; --i) rs.apps.push_back(random_app());

        while (static_cast<int>(rs.rules.size()) < rules) {
            if (rules >= 8 && chance(12)) {
                nested_chain(rs, rules);
                continue;
            }
            rs.rules.push_back(random_rule(rs));
        }
        return rs;
    }

    // ---- packets

    // Aimed at a random rule (often just inside or just outside its edges),
    // or random over the space the rule set talks about.
    Packet packet(const RuleSet& rs) {
        if (!rs.rules.empty() && chance(60)) {
            Packet p = aimed_at(rs, rs.rules[static_cast<size_t>(pick(0, static_cast<int>(rs.rules.size()) - 1))]);
            if (chance(30)) near_miss(rs, p);
            return p;
        }
        return random_packet(rs);
    }

    uint16_t source_port() { return static_cast<uint16_t>(pick(1024, 65535)); }

private:
    Addr random_in(Fam f, const Prefix& p, bool low_bits_only = false) {
        Addr a = p.addr;
        int bits = family_bits(f);
        int from = low_bits_only ? std::max(p.len, bits - 16) : p.len;
        for (int i = from; i < bits; ++i) set_addr_bit(a, i, chance(50));
        return a;
    }

    // An address of p: its first or last, next to them, or anywhere in it.
    Addr address_in(const Prefix& p) {
        const int64_t size_minus_1 = family_bits(p.fam) - p.len >= 62 ? INT64_MAX : (int64_t(1) << (family_bits(p.fam) - p.len)) - 1;
        switch (pick(0, 5)) {
        case 0: return p.first();
        case 1: return p.last();
        case 2: return size_minus_1 >= 1 ? addr_add(p.fam, p.first(), 1) : p.first();
        case 3: return size_minus_1 >= 1 ? addr_add(p.fam, p.last(), -1) : p.last();
        default: return random_in(p.fam, p, p.fam == Fam::v6 && chance(50));
        }
    }

    Prefix random_prefix(Fam f) {
        static const std::vector<int> lens4 = {15, 16, 17, 20, 22, 23, 24, 24, 25, 26, 27, 28, 29, 30, 31, 32, 32};
        static const std::vector<int> lens6 = {48, 52, 56, 60, 63, 64, 64, 65, 72, 96, 112, 120, 124, 126, 127, 128, 128};
        const Addr& anchor = f == Fam::v4 ? one_of(anchors4_) : one_of(anchors6_);
        return Prefix::of(f, anchor, f == Fam::v4 ? one_of(lens4) : one_of(lens6));
    }

    AddrItem inline_item(const Prefix& p) {
        AddrItem item;
        item.prefix = p;
        item.bare = p.len == family_bits(p.fam) && chance(50);
        return item;
    }

    PortRange random_range() {
        uint16_t a = one_of(port_anchors_);
        if (chance(30)) return {a, a};
        static const std::vector<int> widths = {1, 2, 10, 50, 500, 5000, 30000};
        int lo = std::max(0, a - one_of(widths) * pick(0, 1));
        int hi = std::min(65535, a + one_of(widths) * pick(0, 1));
        return {static_cast<uint16_t>(lo), static_cast<uint16_t>(hi)};
    }

    App random_app() {
        App app;
        int r = pick(0, 99);
        app.proto = r < 35 ? kTcp : r < 70 ? kUdp : r < 85 ? kIcmp : kIcmpv6;
        if ((app.proto == kTcp || app.proto == kUdp) && chance(80))
            for (int j = pick(1, 3); j > 0; --j) app.ports.push_back(random_range());
        return app;
    }

    Style match_style() {
        int r = pick(0, 99);
        return r < 12 ? Style::omitted : r < 27 ? Style::any_scalar : r < 31 ? Style::list_with_any : Style::list;
    }

    AddrMatch random_match(const RuleSet& rs) {
        AddrMatch m;
        m.style = match_style();
        if (m.style == Style::omitted || m.style == Style::any_scalar) return m;
        for (int i = pick(1, 3); i > 0; --i) {
            if (chance(30)) {
                AddrItem item;
                item.book = pick(0, static_cast<int>(rs.book.size()) - 1);
                m.items.push_back(item);
            } else {
                m.items.push_back(inline_item(random_prefix(chance(55) ? Fam::v4 : Fam::v6)));
            }
        }
        return m;
    }

    Zone random_from() {
        int r = pick(0, 99);
        return r < 40 ? kTrust : r < 75 ? kUntrust : kDmz;
    }
    Zone random_to() {
        int r = pick(0, 99);
        return r < 40 ? kTrust : r < 94 ? kUntrust : kDmz;  // nothing routes to dmz
    }

    Rule random_rule(const RuleSet& rs) {
        Rule r;
        r.from = random_from();
        r.to = random_to();
        r.src = random_match(rs);
        r.dst = random_match(rs);
        r.app.style = match_style();
        if (r.app.style == Style::list || r.app.style == Style::list_with_any)
            for (int i = pick(1, 3); i > 0; --i) r.app.apps.push_back(pick(0, static_cast<int>(rs.apps.size()) - 1));
        r.action = static_cast<Action>(pick(0, 2));
        return r;
    }

    // Rules that differ only in one address field: the same anchor at nested
    // lengths (/15 ⊃ /16 ⊃ /24 ⊃ /32, /48 ⊃ /64 ⊃ /128), most specific first
    // or most general first, each with its own action.
    void nested_chain(RuleSet& rs, int rules) {
        Rule base = random_rule(rs);
        Fam f = chance(50) ? Fam::v4 : Fam::v6;
        const Addr& anchor = f == Fam::v4 ? one_of(anchors4_) : one_of(anchors6_);
        std::vector<int> lens = f == Fam::v4 ? std::vector<int>{15, 16, 20, 24, 28, 31, 32}
                                             : std::vector<int>{48, 56, 64, 96, 120, 127, 128};
        std::vector<int> chosen;
        for (int len : lens)
            if (chance(60)) chosen.push_back(len);
        if (chosen.size() < 2) chosen = {lens.front(), lens.back()};
        if (chance(60)) std::reverse(chosen.begin(), chosen.end());  // specific first
        bool on_source = chance(50);
        for (int len : chosen) {
            if (static_cast<int>(rs.rules.size()) >= rules) return;
            Rule r = base;
            AddrMatch& m = on_source ? r.src : r.dst;
            m.style = Style::list;
            m.items = {inline_item(Prefix::of(f, anchor, len))};
            if (chance(25)) m.items.push_back(inline_item(random_prefix(f == Fam::v4 ? Fam::v6 : Fam::v4)));
            r.action = static_cast<Action>(pick(0, 2));
            rs.rules.push_back(r);
        }
    }

    // Every prefix a match names, expanded through the address book, of family f.
    std::vector<Prefix> prefixes_of(const RuleSet& rs, const AddrMatch& m, Fam f) {
        std::vector<Prefix> out;
        for (const AddrItem& item : m.items) {
            if (item.book < 0) {
                if (item.prefix.fam == f) out.push_back(item.prefix);
                continue;
            }
            for (const AddrItem& p : rs.book[static_cast<size_t>(item.book)])
                if (p.prefix.fam == f) out.push_back(p.prefix);
        }
        return out;
    }

    Addr random_source(Fam f) {
        for (int i = 0; i < 20; ++i) {
            Addr a = chance(50) ? random_in(f, universe(f), f == Fam::v6 && chance(50))
                                : address_in(Prefix::of(f, f == Fam::v4 ? one_of(anchors4_) : one_of(anchors6_),
                                                        f == Fam::v4 ? pick(20, 32) : pick(64, 128)));
            if (usable_source(f, a)) return a;
        }
        return f == Fam::v4 ? v4(198, 19, 7, 7) : parse_addr(f, "2001:2:0:77::7");
    }

    // A classifiable destination in zone z's subnet.
    Addr random_destination(Fam f, Zone z) {
        if (chance(35)) return f == Fam::v4 ? (z == kTrust ? kLanHostA4 : kWanHostA4) : (z == kTrust ? kLanHostA6 : kWanHostA6);
        for (;;) {
            Addr a = random_in(f, subnet(f, z), f == Fam::v6 && chance(60));
            if (routed_zone(f, a)) return a;
        }
    }

    // A classifiable destination inside p (and a routed subnet), if p has one;
    // in zone `prefer`'s subnet when p reaches both.
    std::optional<Addr> destination_in(const Prefix& p, Zone prefer) {
        for (Zone z : {prefer, prefer == kTrust ? kUntrust : kTrust}) {
            const Prefix& net = subnet(p.fam, z);
            if (p.len <= net.len && p.contains(p.fam, net.addr)) {
                if (chance(40)) return random_destination(p.fam, z);
                Addr a = address_in(net);
                if (routed_zone(p.fam, a)) return a;
                return random_destination(p.fam, z);
            }
            if (net.contains(p.fam, p.addr)) {
                for (int i = 0; i < 8; ++i) {
                    Addr a = address_in(p);
                    if (routed_zone(p.fam, a)) return a;
                }
                return std::nullopt;
            }
        }
        return std::nullopt;
    }

    void set_l4(Packet& p, uint8_t proto, uint16_t port) {
        p.proto = proto;
        p.sport = source_port();
        p.dport = 0;
        p.icmp_type = 0;
        if (proto == kTcp || proto == kUdp) p.dport = port;
        else if (proto == kIcmp || proto == kIcmpv6) p.icmp_type = static_cast<uint8_t>(port);
    }

    uint16_t port_in(const PortRange& r) {
        switch (pick(0, 4)) {
        case 0: return r.lo;
        case 1: return r.hi;
        case 2: return static_cast<uint16_t>(std::min<int>(r.hi, r.lo + 1));
        case 3: return static_cast<uint16_t>(std::max<int>(r.lo, r.hi - 1));
        default: return static_cast<uint16_t>(pick(r.lo, r.hi));
        }
    }

    uint16_t random_port() {
        if (chance(50)) return static_cast<uint16_t>(pick(0, 65535));
        int a = one_of(port_anchors_) + pick(-1, 1);
        return static_cast<uint16_t>(std::clamp(a, 0, 65535));
    }

    // Any protocol: TCP, UDP, ICMP echo, other ICMP messages, GRE.
    void random_l4(Packet& p) {
        int r = pick(0, 99);
        uint8_t icmp = p.fam == Fam::v4 ? kIcmp : kIcmpv6;
        if (r < 35) set_l4(p, kTcp, random_port());
        else if (r < 65) set_l4(p, kUdp, random_port());
        else if (r < 85) set_l4(p, icmp, p.fam == Fam::v4 ? 8 : 128);
        else if (r < 93) set_l4(p, icmp, p.fam == Fam::v4 ? (chance(50) ? 0 : 13) : (chance(50) ? 129 : 200));
        else set_l4(p, kGre, 0);
    }

    Packet aimed_at(const RuleSet& rs, const Rule& r) {
        Packet p;
        p.in = r.from;
        // A family both address fields can match.
        std::vector<Fam> fams;
        for (Fam f : {Fam::v4, Fam::v6}) {
            bool src_ok = r.src.is_any() || !prefixes_of(rs, r.src, f).empty();
            bool dst_ok = r.dst.is_any() || !prefixes_of(rs, r.dst, f).empty();
            if (src_ok && dst_ok) fams.push_back(f);
        }
        p.fam = fams.empty() ? (chance(50) ? Fam::v4 : Fam::v6) : one_of(fams);
        // Application first: an icmpv6 app forces IPv6 when the addresses allow it.
        std::optional<App> app;
        if (!r.app.is_any() && !r.app.apps.empty()) app = rs.apps[static_cast<size_t>(one_of(r.app.apps))];
        if (app && app->proto == kIcmpv6 && std::find(fams.begin(), fams.end(), Fam::v6) != fams.end())
            p.fam = Fam::v6;

        std::vector<Prefix> src = r.src.is_any() ? std::vector<Prefix>{} : prefixes_of(rs, r.src, p.fam);
        p.src = random_source(p.fam);
        if (!src.empty()) {
            for (int i = 0; i < 8; ++i) {
                Addr a = address_in(one_of(src));
                if (usable_source(p.fam, a)) {
                    p.src = a;
                    break;
                }
            }
        }
        Zone want_out = r.to == kDmz ? (chance(50) ? kTrust : kUntrust) : r.to;
        p.dst = random_destination(p.fam, want_out);
        std::vector<Prefix> dst = r.dst.is_any() ? std::vector<Prefix>{} : prefixes_of(rs, r.dst, p.fam);
        if (!dst.empty()) {
            // Prefer a prefix that reaches the rule's egress zone.
            std::vector<Prefix> reaching;
            for (const Prefix& d : dst)
                if (d.contains(p.fam, subnet(p.fam, want_out).addr) || subnet(p.fam, want_out).contains(p.fam, d.addr))
                    reaching.push_back(d);
            const std::vector<Prefix>& from = reaching.empty() ? dst : reaching;
            for (int i = 0; i < 4; ++i)
                if (auto a = destination_in(one_of(from), want_out)) {
                    p.dst = *a;
                    break;
                }
        }
        if (p.src == p.dst) p.src = random_source(p.fam);

        if (!app) {
            random_l4(p);
        } else if (app->proto == kIcmp || app->proto == kIcmpv6) {
            set_l4(p, p.fam == Fam::v4 ? kIcmp : kIcmpv6, p.fam == Fam::v4 ? 8 : 128);
        } else {
            set_l4(p, app->proto, app->ports.empty() ? random_port() : port_in(one_of(app->ports)));
        }
        return p;
    }

    // One field moved just past an edge of the rule set's prefixes or ranges,
    // or to another zone, protocol or ICMP type.
    void near_miss(const RuleSet& rs, Packet& p) {
        switch (pick(0, 5)) {
        case 0:
        case 1: {  // an address next to a prefix edge
            std::vector<Prefix> all;
            for (const Rule& r : rs.rules) {
                auto s = prefixes_of(rs, r.src, p.fam), d = prefixes_of(rs, r.dst, p.fam);
                all.insert(all.end(), s.begin(), s.end());
                all.insert(all.end(), d.begin(), d.end());
            }
            if (all.empty()) return;
            const Prefix& e = one_of(all);
            Addr a = chance(50) ? addr_add(p.fam, e.first(), -1) : addr_add(p.fam, e.last(), 1);
            if (chance(50)) {
                if (usable_source(p.fam, a) && a != p.dst) p.src = a;
            } else if (routed_zone(p.fam, a) && a != p.src) {
                p.dst = a;
            }
            return;
        }
        case 2: {  // a port next to a range edge
            if (p.proto != kTcp && p.proto != kUdp) return;
            std::vector<PortRange> ranges;
            for (const App& a : rs.apps)
                if (a.proto == p.proto) ranges.insert(ranges.end(), a.ports.begin(), a.ports.end());
            if (ranges.empty()) return;
            const PortRange& r = one_of(ranges);
            p.dport = chance(50) ? static_cast<uint16_t>(r.lo - 1) : static_cast<uint16_t>(r.hi + 1);
            return;
        }
        case 3:  // the other transport
            if (p.proto == kTcp) p.proto = kUdp;
            else if (p.proto == kUdp) p.proto = kTcp;
            return;
        case 4:  // another ingress zone
            p.in = static_cast<Zone>((p.in + pick(1, 2)) % kZones);
            return;
        default:  // ICMP: not an echo request
            if (p.proto == kIcmp) p.icmp_type = chance(50) ? 0 : 13;
            else if (p.proto == kIcmpv6) p.icmp_type = chance(50) ? 129 : 200;
            return;
        }
    }

    Packet random_packet(const RuleSet& rs) {
        Packet p;
        p.in = static_cast<Zone>(pick(0, kZones - 1));
        p.fam = chance(50) ? Fam::v4 : Fam::v6;
        Zone out = chance(50) ? kTrust : kUntrust;
        p.dst = random_destination(p.fam, out);
        if (chance(40)) {
            // Somewhere the rule set's prefixes reach.
            std::vector<Prefix> all;
            for (const auto& entry : rs.book)
                for (const AddrItem& item : entry)
                    if (item.prefix.fam == p.fam) all.push_back(item.prefix);
            for (const Rule& r : rs.rules)
                for (const AddrMatch* m : {&r.src, &r.dst})
                    for (const AddrItem& item : m->items)
                        if (item.book < 0 && item.prefix.fam == p.fam) all.push_back(item.prefix);
            if (!all.empty()) {
                if (auto a = destination_in(one_of(all), out)) p.dst = *a;
                Addr s = address_in(one_of(all));
                p.src = usable_source(p.fam, s) ? s : random_source(p.fam);
            } else {
                p.src = random_source(p.fam);
            }
        } else {
            p.src = random_source(p.fam);
        }
        if (p.src == p.dst) p.src = random_source(p.fam);
        random_l4(p);
        return p;
    }

    std::mt19937_64 rng_;
    std::vector<Addr> anchors4_, anchors6_;
    std::vector<uint16_t> port_anchors_;
};

// ---------------------------------------------------------------- datapath

#if SLUICE_POLICY_RANDOM_HAVE_DATAPATH

// A namespace and one loaded datapath that configs are applied to in turn,
// like `sluice reload` does.
class ReloadableDatapath {
public:
    static Result<std::unique_ptr<ReloadableDatapath>> create() {
        std::unique_ptr<ReloadableDatapath> env(new ReloadableDatapath());
        auto ns = NetnsFixture::create();
        if (!ns) return make_error("namespace: " + ns.error().message);
        env->ns_ = std::move(ns.value());
        // Tagged ingress is keyed by (lan0, vid): the VLAN device is optional.
        (void)env->ns_->add_vlan("lan0", kDmzVlan);
        auto dp = Datapath::open(DatapathOptions{});
        if (!dp) return make_error("Datapath::open: " + dp.error().message);
        env->dp_ = std::move(dp.value());
        return env;
    }

    Status apply(const std::string& yaml, ClassifierGrouping grouping, uint32_t& groups) {
        auto parsed = config::parse_config(yaml, "policy-random.yaml");
        if (!parsed.ok()) {
            std::string msg = "config rejected:";
            for (const auto& d : parsed.diagnostics) msg += "\n  " + config::format_diagnostic(d);
            return make_error(msg);
        }
        auto compiled = compiler::compile(*parsed.config, dp_->inactive_generation(), grouping);
        if (!compiled) return make_error("compile: " + compiled.error().message);
        groups = compiled.value().tables.layout.groups;
        auto interfaces = Datapath::resolve(compiled.value());
        if (!interfaces) return make_error("resolve: " + interfaces.error().message);
        return dp_->apply(compiled.value(), interfaces.value());
    }

    NetnsFixture& ns() { return *ns_; }
    int map_fd(const char* name) const { return dp_->map_fd(name); }
    int prog_fd(const char* name) const { return dp_->prog_fd(name); }

    ~ReloadableDatapath() {
        dp_.reset();  // close the datapath's fds before leaving the namespace
        ns_.reset();
    }

private:
    ReloadableDatapath() = default;
    std::unique_ptr<NetnsFixture> ns_;
    std::unique_ptr<Datapath> dp_;
};

#else

// Without the loader the fixture skips (datapath_unavailable_reason).
class ReloadableDatapath {
public:
    static Result<std::unique_ptr<ReloadableDatapath>> create() { return make_error(datapath_unavailable_reason()); }
    Status apply(const std::string&, ClassifierGrouping, uint32_t&) { return make_error(datapath_unavailable_reason()); }
    NetnsFixture& ns() { return *ns_; }
    int map_fd(const char*) const { return -1; }
    int prog_fd(const char*) const { return -1; }

private:
    std::unique_ptr<NetnsFixture> ns_;
};

#endif

std::string describe_winner(const RuleSet& rs, std::optional<size_t> winner) {
    if (!winner) return std::string("default-action ") + action_name(rs.default_action);
    return "rule r" + std::to_string(*winner) + " (" + action_name(rs.rules[*winner].action) + ")";
}

struct Totals {
    size_t packets = 0, rule_sets = 0, rules = 0;
    size_t grouped = 0;                  // rule sets classified through 2+ groups
    size_t rule_hits[3] = {0, 0, 0};     // by action
    size_t default_hits[3] = {0, 0, 0};  // by default action
    size_t overlapping = 0;              // packets that two or more rules match
    size_t order_decides = 0;            // ... with different actions
    size_t v4 = 0, v6 = 0, tcp = 0, udp = 0, icmp_echo = 0, icmp_other = 0, other = 0;
    size_t redirected = 0, passed_no_neigh = 0, tx = 0, dropped = 0;
    size_t zone_pairs[kZones][kZones] = {};
};

uint64_t env_u64(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

constexpr uint64_t kDefaultSeed = 0x51c3'2026'0001ull;
constexpr int kRuleSets = 32;
constexpr int kPacketsPerRuleSet = 3500;

class PolicyRandom : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto reason = bpf_unavailable_reason()) GTEST_SKIP() << "skipped: " << *reason;
        if (auto reason = datapath_unavailable_reason(); !reason.empty()) GTEST_SKIP() << "skipped: " << reason;
    }
};

Ipv4Addr to4(const Addr& a) {
    Ipv4Addr r;
    std::copy(a.begin(), a.begin() + 4, r.bytes.begin());
    return r;
}
Ipv6Addr to6(const Addr& a) {
    Ipv6Addr r;
    std::copy(a.begin(), a.end(), r.bytes.begin());
    return r;
}

Bytes build_frame(const Packet& p, const Mac& lan_mac, const Mac& wan_mac, uint32_t seq) {
    static const Mac lan_host = Mac::parse(NetnsFixture::kLanHostMac), wan_host = Mac::parse(NetnsFixture::kWanHostMac);
    PacketBuilder b;
    if (p.in == kUntrust) b.eth(wan_host, wan_mac);
    else b.eth(lan_host, lan_mac);
    if (p.in == kDmz) b.vlan(kDmzVlan);
    if (p.fam == Fam::v4) b.ipv4(to4(p.src), to4(p.dst)).ttl(64);
    else b.ipv6(to6(p.src), to6(p.dst)).hop_limit(64);
    switch (p.proto) {
    case kTcp: b.tcp(p.sport, p.dport).seq(seq).syn(); break;
    case kUdp: b.udp(p.sport, p.dport).payload_pattern(12); break;
    case kIcmp: b.icmp(p.icmp_type, 0, static_cast<uint32_t>(p.sport) << 16 | 1).payload_pattern(16); break;
    case kIcmpv6: b.icmpv6(p.icmp_type, 0, static_cast<uint32_t>(p.sport) << 16 | 1).payload_pattern(16); break;
    default: b.protocol(p.proto).payload_pattern(24); break;
    }
    return b.build();
}

// The tuple in both directions, for "never reuse a flow".
std::string tuple_id(const Packet& p, bool reverse) {
    std::string s;
    s.push_back(static_cast<char>(p.fam));
    s.push_back(static_cast<char>(p.proto));
    const Addr& a = reverse ? p.dst : p.src;
    const Addr& b = reverse ? p.src : p.dst;
    s.append(reinterpret_cast<const char*>(a.data()), 16);
    s.append(reinterpret_cast<const char*>(b.data()), 16);
    uint16_t sp = reverse ? p.key_dport() : p.key_sport(), dp = reverse ? p.key_sport() : p.key_dport();
    s.push_back(static_cast<char>(sp >> 8));
    s.push_back(static_cast<char>(sp));
    s.push_back(static_cast<char>(dp >> 8));
    s.push_back(static_cast<char>(dp));
    return s;
}

uint16_t zone_id_of(int zones_fd, uint32_t ifindex, uint16_t vlan) {
    zone_key k{};
    k.ifindex = ifindex;
    k.vlan_id = vlan;
    zone_value v{};
    if (bpf_map_lookup_elem(zones_fd, &k, &v) != 0) return 0;
    return v.zone_id;
}

TEST_F(PolicyRandom, WinningRuleMatchesLinearFirstMatch) {
    const uint64_t seed = env_u64("SLUICE_POLICY_RANDOM_SEED", kDefaultSeed);
    const char* only_env = std::getenv("SLUICE_POLICY_RANDOM_ONLY");
    const int only = only_env && *only_env ? std::atoi(only_env) : -1;

    auto created = ReloadableDatapath::create();
    ASSERT_TRUE(created.ok()) << created.error().message;
    ReloadableDatapath& env = *created.value();
    const int main_fd = env.prog_fd(SLUICE_PROG_XDP_MAIN);
    const int s4_fd = env.map_fd(SLUICE_MAP_SESSIONS_V4), s6_fd = env.map_fd(SLUICE_MAP_SESSIONS_V6);
    const int fc_fd = env.map_fd(SLUICE_MAP_FLOW_CACHE), zones_fd = env.map_fd(SLUICE_MAP_ZONES);
    ASSERT_GE(main_fd, 0);
    ASSERT_GE(s4_fd, 0);
    ASSERT_GE(s6_fd, 0);
    ASSERT_GE(fc_fd, 0);
    ASSERT_GE(zones_fd, 0);
    const Mac lan_mac = env.ns().lan().mac, wan_mac = env.ns().wan().mac;
    const uint32_t lan_if = env.ns().lan().ifindex, wan_if = env.ns().wan().ifindex;
    XdpRunner runner(main_fd);

    Totals t;
    size_t mismatches = 0, printed = 0, yaml_printed = 0;

    for (int set = 0; set < kRuleSets; ++set) {
        if (only >= 0 && set != only) continue;
        Generator gen(seed * 1000003u + static_cast<uint64_t>(set));
        // Sizes: a few tiny sets, most mid-sized, some near 300 rules.
        int size_class = gen.pick(0, 99);
        int rules = size_class < 15 ? gen.pick(1, 5) : size_class < 65 ? gen.pick(10, 100)
                  : size_class < 85 ? gen.pick(100, 200) : gen.pick(200, 300);
        const Action default_action = static_cast<Action>(set % 3);
        const RuleSet rs = gen.rule_set(rules, default_action);
        const std::string yaml = render_yaml(rs);
        uint32_t groups = 0;
        Status applied =
            env.apply(yaml, set % 2 ? ClassifierGrouping::by_shape : ClassifierGrouping::when_needed, groups);
        ASSERT_TRUE(applied.ok()) << "seed " << seed << " rule set " << set << ": " << applied.error().message
                                  << "\n" << yaml;
        clear_map(s4_fd);
        clear_map(s6_fd);
        clear_map(fc_fd);
        uint16_t zone_ids[kZones] = {zone_id_of(zones_fd, lan_if, 0), zone_id_of(zones_fd, wan_if, 0),
                                     zone_id_of(zones_fd, lan_if, kDmzVlan)};
        ASSERT_NE(zone_ids[kTrust], 0) << "lan0 has no zone";
        ASSERT_NE(zone_ids[kUntrust], 0) << "wan0 has no zone";
        ASSERT_NE(zone_ids[kDmz], 0) << "lan0 vlan 100 has no zone";
        ++t.rule_sets;
        t.rules += rs.rules.size();
        if (groups > 1) ++t.grouped;

        std::unordered_set<std::string> used;
        size_t set_mismatches = 0;
        for (int i = 0; i < kPacketsPerRuleSet; ++i) {
            Packet p = gen.packet(rs);
            // A fresh tuple, in both directions, for this rule set.
            for (int tries = 0; used.count(tuple_id(p, false)) || used.count(tuple_id(p, true)); ++tries) {
                bool has_ports = p.key_sport() || p.key_dport();
                if (tries > 50 || !has_ports) p = gen.packet(rs);
                else p.sport = gen.source_port();
            }
            ASSERT_TRUE(routed_zone(p.fam, p.dst)) << "generator bug: " << addr_text(p.fam, p.dst) << " is not routed";
            used.insert(tuple_id(p, false));
            used.insert(tuple_id(p, true));

            const std::optional<size_t> winner = reference_winner(rs, p);
            const Action expected_action = winner ? rs.rules[*winner].action : rs.default_action;
            const uint32_t expected_id = winner ? static_cast<uint32_t>(*winner) : SESSION_POLICY_RELATED;
            const Zone out = p.out();
            const bool resolved = p.fam == Fam::v4 ? (p.dst == kLanHostA4 || p.dst == kWanHostA4)
                                                   : (p.dst == kLanHostA6 || p.dst == kWanHostA6);

            auto r = runner.run(build_frame(p, lan_mac, wan_mac, static_cast<uint32_t>(i) * 7919u),
                                p.in == kUntrust ? wan_if : lan_if);
            ASSERT_TRUE(r.ok()) << r.error().message;
            const int verdict = r.value().retval;

            std::optional<session_value> session;
            std::optional<FlowCacheEntry> cached;
            if (p.fam == Fam::v4) {
                session = lookup_session(s4_fd, session_key(to4(p.src), to4(p.dst), p.key_sport(), p.key_dport(), p.proto));
                cached = lookup_flow_cache(fc_fd, flow_cache_key_of(zone_ids[p.in], to4(p.src), to4(p.dst),
                                                                    p.key_sport(), p.key_dport(), p.proto));
            } else {
                session = lookup_session(s6_fd, session_key(to6(p.src), to6(p.dst), p.key_sport(), p.key_dport(), p.proto));
                cached = lookup_flow_cache(fc_fd, flow_cache_key_of(zone_ids[p.in], to6(p.src), to6(p.dst),
                                                                    p.key_sport(), p.key_dport(), p.proto));
            }

            // Compare everything a user can see.
            std::vector<std::string> wrong;
            int expected_verdict = expected_action == Action::permit ? (resolved ? XDP_REDIRECT : XDP_PASS)
                                 : expected_action == Action::deny ? XDP_DROP : XDP_TX;
            if (verdict != expected_verdict)
                wrong.push_back("verdict " + xdp_verdict_name(verdict) + ", expected " + xdp_verdict_name(expected_verdict));
            if (expected_action == Action::permit) {
                if (!session) {
                    wrong.push_back("no session");
                } else {
                    if (session->policy_id != expected_id)
                        wrong.push_back("session policy id " + std::to_string(session->policy_id) + ", expected " +
                                        std::to_string(expected_id));
                    if (session->zone_in != zone_ids[p.in] || session->zone_out != zone_ids[out])
                        wrong.push_back("session zones " + std::to_string(session->zone_in) + "->" +
                                        std::to_string(session->zone_out) + ", expected " +
                                        std::to_string(zone_ids[p.in]) + "->" + std::to_string(zone_ids[out]));
                }
                if (cached) wrong.push_back("flow-cache entry for a permitted flow (policy id " +
                                            std::to_string(cached->value.policy_id) + ")");
            } else {
                if (session) wrong.push_back("a session (policy id " + std::to_string(session->policy_id) +
                                             "), expected none (" + action_name(expected_action) + ")");
                if (!cached) {
                    wrong.push_back("no flow-cache entry");
                } else {
                    uint8_t want = expected_action == Action::deny ? POLICY_ACTION_DENY : POLICY_ACTION_REJECT;
                    if (cached->value.policy_id != expected_id)
                        wrong.push_back("flow-cache policy id " + std::to_string(cached->value.policy_id) +
                                        ", expected " + std::to_string(expected_id));
                    if (cached->value.action != want)
                        wrong.push_back("flow-cache action " + std::to_string(cached->value.action) + ", expected " +
                                        std::to_string(want));
                    if (cached->cpus != 1) wrong.push_back("flow-cache entry on " + std::to_string(cached->cpus) + " CPUs");
                }
                if (expected_action == Action::reject && verdict == XDP_TX) {
                    // The answer: RST for TCP, administratively prohibited otherwise.
                    auto f = parse_frame(r.value().output);
                    bool ok = f && f->l4_present;
                    if (ok && p.proto == kTcp) ok = f->l4_proto == kTcp && (f->tcp_flags & tcp_flag::kRst);
                    else if (ok && p.fam == Fam::v4) ok = f->l4_proto == kIcmp && f->icmp_type == 3 && f->icmp_code == 13;
                    else if (ok) ok = f->l4_proto == kIcmpv6 && f->icmp_type == 1 && f->icmp_code == 1;
                    if (!ok) wrong.push_back("reject answer is " + summarize_frame(r.value().output));
                }
            }

            if (!wrong.empty()) {
                ++mismatches;
                ++set_mismatches;
                if (printed < 12) {
                    ++printed;
                    // What the datapath's evidence says won.
                    std::string observed = "no session, no flow-cache entry";
                    if (session || cached) {
                        uint32_t seen_id = session ? session->policy_id : cached->value.policy_id;
                        observed = std::string(session ? "session" : "flow-cache entry") + " with " +
                                   (seen_id == SESSION_POLICY_RELATED ? "no policy (default-action)"
                                                                      : "policy id " + std::to_string(seen_id) +
                                                                            " (r" + std::to_string(seen_id) + ")");
                    }
                    std::string all_matching;
                    for (size_t k = 0; k < rs.rules.size(); ++k)
                        if (rule_matches(rs, rs.rules[k], p)) all_matching += " r" + std::to_string(k);
                    ADD_FAILURE() << "seed " << seed << " rule set " << set << " (" << rs.rules.size()
                                  << " rules) packet " << i << ": " << describe_packet(p)
                                  << "\n  reference: " << describe_winner(rs, winner)
                                  << " (rules matching:" << (all_matching.empty() ? " none" : all_matching) << ")"
                                  << "\n  datapath:  " << observed << ", " << xdp_verdict_name(verdict)
                                  << "\n  wrong: " << [&] {
                                         std::string s;
                                         for (const auto& w : wrong) s += (s.empty() ? "" : "; ") + w;
                                         return s;
                                     }()
                                  << "\n  reproduce: SLUICE_POLICY_RANDOM_SEED=" << seed
                                  << " SLUICE_POLICY_RANDOM_ONLY=" << set;
                }
            }

            // Totals.
            ++t.packets;
            (winner ? t.rule_hits : t.default_hits)[static_cast<int>(expected_action)]++;
            const Matches matches = all_matches(rs, p);
            t.overlapping += matches.count >= 2;
            t.order_decides += matches.order_decides_action;
            (p.fam == Fam::v4 ? t.v4 : t.v6)++;
            if (p.proto == kTcp) ++t.tcp;
            else if (p.proto == kUdp) ++t.udp;
            else if (p.echo_request()) ++t.icmp_echo;
            else if (p.proto == kIcmp || p.proto == kIcmpv6) ++t.icmp_other;
            else ++t.other;
            if (verdict == XDP_REDIRECT) ++t.redirected;
            else if (verdict == XDP_PASS) ++t.passed_no_neigh;
            else if (verdict == XDP_TX) ++t.tx;
            else if (verdict == XDP_DROP) ++t.dropped;
            t.zone_pairs[p.in][out]++;
        }
        if (set_mismatches && yaml_printed < 2) {
            ++yaml_printed;
            ADD_FAILURE() << "seed " << seed << " rule set " << set << ": " << set_mismatches << " of "
                          << kPacketsPerRuleSet << " packets disagree; the rule set:\n" << yaml;
        }
    }

    std::ostringstream s;
    s << "policy-random: seed " << seed << ", " << t.rule_sets << " rule sets (" << t.rules << " rules), "
      << t.packets << " packets, " << mismatches << " disagreements\n"
      << "  rule sets classified through 2 or more groups: " << t.grouped << "\n"
      << "  winners: permit rule " << t.rule_hits[0] << ", deny rule " << t.rule_hits[1] << ", reject rule "
      << t.rule_hits[2] << "; default permit " << t.default_hits[0] << ", default deny " << t.default_hits[1]
      << ", default reject " << t.default_hits[2] << "\n"
      << "  packets two or more rules match: " << t.overlapping << " (with different actions: "
      << t.order_decides << ")\n"
      << "  IPv4 " << t.v4 << ", IPv6 " << t.v6 << "; TCP " << t.tcp << ", UDP " << t.udp << ", ICMP echo "
      << t.icmp_echo << ", other ICMP " << t.icmp_other << ", GRE " << t.other << "\n"
      << "  verdicts: redirect " << t.redirected << ", pass (no neighbour) " << t.passed_no_neigh << ", tx "
      << t.tx << ", drop " << t.dropped << "\n  zone pairs:";
    for (int a = 0; a < kZones; ++a)
        for (int b = 0; b < 2; ++b) s << " " << kZoneNames[a] << "->" << kZoneNames[b] << " " << t.zone_pairs[a][b];
    std::cout << s.str() << std::endl;

    EXPECT_EQ(mismatches, 0u);
    if (only >= 0) return;  // one rule set: the minimums below are for the whole run
    EXPECT_GE(t.packets, 100000u);
    EXPECT_GE(t.grouped, static_cast<size_t>(kRuleSets / 4)) << "too few rule sets split into groups";
    const size_t floor = t.packets / 50;  // every outcome at least 2% of the packets
    for (int a = 0; a < 3; ++a) {
        EXPECT_GE(t.rule_hits[a], floor) << action_name(static_cast<Action>(a)) << " rules won too rarely";
        EXPECT_GE(t.default_hits[a], floor / 3) << "default " << action_name(static_cast<Action>(a)) << " too rare";
    }
    EXPECT_GE(t.overlapping, t.packets / 5) << "too few packets exercise overlapping rules";
    EXPECT_GE(t.order_decides, t.packets / 10) << "too few packets where the order of the rules matters";
    for (size_t n : {t.v4, t.v6, t.tcp, t.udp, t.icmp_echo}) EXPECT_GE(n, floor);
    EXPECT_GE(t.icmp_other + t.other, floor / 2);
    EXPECT_GE(t.redirected, floor);
    for (int a = 0; a < kZones; ++a)
        for (int b = 0; b < 2; ++b) EXPECT_GE(t.zone_pairs[a][b], floor / 2) << kZoneNames[a] << "->" << kZoneNames[b];
}

}  // namespace
}  // namespace sluice::test
