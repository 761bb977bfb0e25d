#include "random_rules.h"

#include <arpa/inet.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "netns_fixture.h"

extern "C" {
#include "map_names.h"
}

namespace sluice::test::random_rules {

// ------------------------------------------------------------ addresses

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

// Two's complement, byte by byte.
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

bool Prefix::contains(Fam f, const Addr& x) const {
    if (f != fam) return false;
    for (int i = 0; i < len; ++i)
        if (addr_bit(addr, i) != addr_bit(x, i)) return false;
    return true;
}

Addr Prefix::last() const {
    Addr a = addr;
    for (int i = len; i < family_bits(fam); ++i) set_addr_bit(a, i, true);
    return a;
}

Prefix Prefix::of(Fam f, Addr a, int len) {
    for (int i = len; i < 128; ++i) set_addr_bit(a, i, false);
    if (f == Fam::v4) std::fill(a.begin() + 4, a.end(), 0);
    return Prefix{f, a, len};
}

const Prefix kLan4 = Prefix::of(Fam::v4, v4(198, 18, 1, 0), 24);
const Prefix kWan4 = Prefix::of(Fam::v4, v4(198, 18, 100, 0), 24);
const Prefix kLan6 = Prefix::of(Fam::v6, parse_addr(Fam::v6, "2001:2:0:1::"), 64);
const Prefix kWan6 = Prefix::of(Fam::v6, parse_addr(Fam::v6, "2001:2:0:100::"), 64);
const Prefix kUniverse4 = Prefix::of(Fam::v4, v4(198, 18, 0, 0), 15);
const Prefix kUniverse6 = Prefix::of(Fam::v6, parse_addr(Fam::v6, "2001:2::"), 48);
const Addr kLanHostA4 = v4(198, 18, 1, 10), kWanHostA4 = v4(198, 18, 100, 200);
const Addr kLanHostA6 = parse_addr(Fam::v6, "2001:2:0:1::10");
const Addr kWanHostA6 = parse_addr(Fam::v6, "2001:2:0:100::200");

const char* const kZoneNames[kZones] = {"trust", "untrust", "dmz"};

const Prefix& subnet(Fam f, Zone z) {
    if (f == Fam::v4) return z == kTrust ? kLan4 : kWan4;
    return z == kTrust ? kLan6 : kWan6;
}

const Prefix& universe(Fam f) { return f == Fam::v4 ? kUniverse4 : kUniverse6; }

bool special_host(Fam f, const Addr& a, const Prefix& net) {
    Addr host_part{};
    for (int i = net.len; i < family_bits(f); ++i) set_addr_bit(host_part, i, addr_bit(a, i));
    Addr zero{};
    Addr one = addr_add(f, zero, 1);
    if (host_part == zero || host_part == one) return true;
    return f == Fam::v4 && a[3] == 255;
}

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

std::string protocol_text(uint8_t proto) {
    switch (proto) {
    case kTcp: return "tcp";
    case kUdp: return "udp";
    case kIcmp: return "icmp";
    case kIcmpv6: return "icmpv6";
    default: return std::to_string(proto);
    }
}

bool in_any(const std::vector<PortRange>& ranges, uint16_t port) {
    for (const PortRange& r : ranges)
        if (r.contains(port)) return true;
    return false;
}

// ------------------------------------------------------------ address fields

bool addresses_match(const AddressBook& book, const AddrMatch& m, Fam f, const Addr& a) {
    if (m.is_any()) return true;
    for (const AddrItem& item : m.items) {
        if (item.book < 0) {
            if (item.prefix.contains(f, a)) return true;
            continue;
        }
        for (const AddrItem& p : book[static_cast<size_t>(item.book)])
            if (p.prefix.contains(f, a)) return true;
    }
    return false;
}

std::vector<Prefix> prefixes_of(const AddressBook& book, const AddrMatch& m, Fam f) {
    std::vector<Prefix> out;
    for (const AddrItem& item : m.items) {
        if (item.book < 0) {
            if (item.prefix.fam == f) out.push_back(item.prefix);
            continue;
        }
        for (const AddrItem& p : book[static_cast<size_t>(item.book)])
            if (p.prefix.fam == f) out.push_back(p.prefix);
    }
    return out;
}

// ------------------------------------------------------------ YAML

std::string prefix_text(const Prefix& p, bool bare) {
    std::string s = addr_text(p.fam, p.addr);
    if (!(bare && p.len == family_bits(p.fam))) s += "/" + std::to_string(p.len);
    return p.fam == Fam::v6 ? "\"" + s + "\"" : s;
}

namespace {
std::string item_text(const AddrItem& item) {
    return item.book >= 0 ? "ab" + std::to_string(item.book) : prefix_text(item.prefix, item.bare);
}
}  // namespace

std::string port_text(const PortRange& r) {
    return r.lo == r.hi ? std::to_string(r.lo) : std::to_string(r.lo) + "-" + std::to_string(r.hi);
}

std::string port_set_text(const std::vector<PortRange>& ranges) {
    if (ranges.size() == 1) return port_text(ranges[0]);
    std::string s = "[";
    for (size_t j = 0; j < ranges.size(); ++j) s += (j ? ", " : "") + port_text(ranges[j]);
    return s + "]";
}

void render_addr_field(std::ostringstream& y, const char* indent, const char* key, const AddrMatch& m) {
    if (m.style == Style::omitted) return;
    y << indent << key << ": ";
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

void render_address_book(std::ostringstream& y, const AddressBook& book) {
    y << "address-book:\n";
    for (size_t i = 0; i < book.size(); ++i) {
        y << "  ab" << i << ": [";
        for (size_t j = 0; j < book[i].size(); ++j)
            y << (j ? ", " : "") << prefix_text(book[i][j].prefix, book[i][j].bare);
        y << "]\n";
    }
}

void render_interfaces(std::ostringstream& y, const std::array<std::string, kZones>& extra) {
    y << "interfaces:\n"
         "  lan0: { zone: trust" << extra[kTrust] << " }\n"
         "  lan0." << kDmzVlan << ": { zone: dmz" << extra[kDmz] << " }\n"
         "  wan0: { zone: untrust" << extra[kUntrust] << " }\n"
         // Packets for the firewall itself are host-inbound's (host_inbound_test.cpp):
         // `all` lets them through, so the models here see only filters and policies.
         "zones:\n"
         "  trust: { host-inbound: [all] }\n"
         "  untrust: { host-inbound: [all] }\n"
         "  dmz: { host-inbound: [all] }\n";
}

// ------------------------------------------------------------ packets

uint16_t Packet::key_sport() const {
    if (proto == kTcp || proto == kUdp) return sport;
    return echo_request() ? sport : 0;
}

uint16_t Packet::key_dport() const {
    if (proto == kTcp || proto == kUdp) return dport;
    return echo_reply() ? sport : 0;
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
      << kZoneNames[p.in];
    if (routed_zone(p.fam, p.dst)) s << " -> " << kZoneNames[p.out()];
    s << ")";
    return s.str();
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

uint64_t env_u64(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

// ------------------------------------------------------------ generation

AddressBook FieldGenerator::start_rule_set() {
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

    AddressBook book;
    for (int i = pick(2, 10); i > 0; --i) {
        std::vector<AddrItem> entry;
        for (int j = pick(1, 4); j > 0; --j)
            entry.push_back(inline_item(random_prefix(chance(55) ? Fam::v4 : Fam::v6)));
        book.push_back(entry);
    }
    return book;
}

Addr FieldGenerator::random_in(Fam f, const Prefix& p, bool low_bits_only) {
    Addr a = p.addr;
    int bits = family_bits(f);
    int from = low_bits_only ? std::max(p.len, bits - 16) : p.len;
    for (int i = from; i < bits; ++i) set_addr_bit(a, i, chance(50));
    return a;
}

Addr FieldGenerator::address_in(const Prefix& p) {
    const int64_t size_minus_1 =
        family_bits(p.fam) - p.len >= 62 ? INT64_MAX : (int64_t(1) << (family_bits(p.fam) - p.len)) - 1;
    switch (pick(0, 5)) {
    case 0: return p.first();
    case 1: return p.last();
    case 2: return size_minus_1 >= 1 ? addr_add(p.fam, p.first(), 1) : p.first();
    case 3: return size_minus_1 >= 1 ? addr_add(p.fam, p.last(), -1) : p.last();
    default: return random_in(p.fam, p, p.fam == Fam::v6 && chance(50));
    }
}

Addr FieldGenerator::next_to(const Prefix& p) {
    return chance(50) ? addr_add(p.fam, p.first(), -1) : addr_add(p.fam, p.last(), 1);
}

Prefix FieldGenerator::random_prefix(Fam f) {
    static const std::vector<int> lens4 = {15, 16, 17, 20, 22, 23, 24, 24, 25, 26, 27, 28, 29, 30, 31, 32, 32};
    static const std::vector<int> lens6 = {48, 52, 56, 60, 63, 64, 64, 65, 72, 96, 112, 120, 124, 126, 127, 128, 128};
    const Addr& anchor = f == Fam::v4 ? one_of(anchors4_) : one_of(anchors6_);
    return Prefix::of(f, anchor, f == Fam::v4 ? one_of(lens4) : one_of(lens6));
}

AddrItem FieldGenerator::inline_item(const Prefix& p) {
    AddrItem item;
    item.prefix = p;
    item.bare = p.len == family_bits(p.fam) && chance(50);
    return item;
}

Style FieldGenerator::match_style() {
    int r = pick(0, 99);
    return r < 12 ? Style::omitted : r < 27 ? Style::any_scalar : r < 31 ? Style::list_with_any : Style::list;
}

AddrMatch FieldGenerator::random_match(const AddressBook& book) {
    AddrMatch m;
    m.style = match_style();
    if (m.style == Style::omitted || m.style == Style::any_scalar) return m;
    for (int i = pick(1, 3); i > 0; --i) {
        if (chance(30)) {
            AddrItem item;
            item.book = pick(0, static_cast<int>(book.size()) - 1);
            m.items.push_back(item);
        } else {
            m.items.push_back(inline_item(random_prefix(chance(55) ? Fam::v4 : Fam::v6)));
        }
    }
    return m;
}

std::vector<Prefix> FieldGenerator::nested_prefixes() {
    Fam f = chance(50) ? Fam::v4 : Fam::v6;
    const Addr& anchor = f == Fam::v4 ? one_of(anchors4_) : one_of(anchors6_);
    std::vector<int> lens = f == Fam::v4 ? std::vector<int>{15, 16, 20, 24, 28, 31, 32}
                                         : std::vector<int>{48, 56, 64, 96, 120, 127, 128};
    std::vector<int> chosen;
    for (int len : lens)
        if (chance(60)) chosen.push_back(len);
    if (chosen.size() < 2) chosen = {lens.front(), lens.back()};
    if (chance(60)) std::reverse(chosen.begin(), chosen.end());  // specific first
    std::vector<Prefix> out;
    for (int len : chosen) out.push_back(Prefix::of(f, anchor, len));
    return out;
}

Addr FieldGenerator::random_source(Fam f) {
    for (int i = 0; i < 20; ++i) {
        Addr a = chance(50) ? random_in(f, universe(f), f == Fam::v6 && chance(50))
                            : address_in(Prefix::of(f, f == Fam::v4 ? one_of(anchors4_) : one_of(anchors6_),
                                                    f == Fam::v4 ? pick(20, 32) : pick(64, 128)));
        if (usable_source(f, a)) return a;
    }
    return f == Fam::v4 ? v4(198, 19, 7, 7) : parse_addr(f, "2001:2:0:77::7");
}

PortRange FieldGenerator::random_range() {
    uint16_t a = one_of(port_anchors_);
    if (chance(30)) return {a, a};
    static const std::vector<int> widths = {1, 2, 10, 50, 500, 5000, 30000};
    int lo = std::max(0, a - one_of(widths) * pick(0, 1));
    int hi = std::min(65535, a + one_of(widths) * pick(0, 1));
    return {static_cast<uint16_t>(lo), static_cast<uint16_t>(hi)};
}

uint16_t FieldGenerator::port_in(const PortRange& r) {
    switch (pick(0, 4)) {
    case 0: return r.lo;
    case 1: return r.hi;
    case 2: return static_cast<uint16_t>(std::min<int>(r.hi, r.lo + 1));
    case 3: return static_cast<uint16_t>(std::max<int>(r.lo, r.hi - 1));
    default: return static_cast<uint16_t>(pick(r.lo, r.hi));
    }
}

uint16_t FieldGenerator::random_port() {
    if (chance(50)) return static_cast<uint16_t>(pick(0, 65535));
    int a = one_of(port_anchors_) + pick(-1, 1);
    return static_cast<uint16_t>(std::clamp(a, 0, 65535));
}

void FieldGenerator::set_l4(Packet& p, uint8_t proto, uint16_t port) {
    p.proto = proto;
    p.sport = source_port();
    p.dport = 0;
    p.icmp_type = 0;
    if (proto == kTcp || proto == kUdp) p.dport = port;
    else if (proto == kIcmp || proto == kIcmpv6) p.icmp_type = static_cast<uint8_t>(port);
}

void FieldGenerator::random_l4(Packet& p) {
    int r = pick(0, 99);
    uint8_t icmp = p.fam == Fam::v4 ? kIcmp : kIcmpv6;
    if (r < 35) set_l4(p, kTcp, random_port());
    else if (r < 65) set_l4(p, kUdp, random_port());
    else if (r < 85) set_l4(p, icmp, p.fam == Fam::v4 ? 8 : 128);
    else if (r < 93) set_l4(p, icmp, p.fam == Fam::v4 ? (chance(50) ? 0 : 13) : (chance(50) ? 129 : 200));
    else set_l4(p, kGre, 0);
}

// ------------------------------------------------------------ the test frame

void RandomRulesTest::use_environment(const std::string& name, uint64_t default_seed) {
    name_ = name;
    seed_ = env_u64(("SLUICE_" + name + "_SEED").c_str(), default_seed);
    const char* only = std::getenv(("SLUICE_" + name + "_ONLY").c_str());
    only_ = only && *only ? std::atoi(only) : -1;
}

std::string RandomRulesTest::where(int set) const {
    return "seed " + std::to_string(seed_) + " rule set " + std::to_string(set);
}

std::string RandomRulesTest::reproduce(int set) const {
    return "SLUICE_" + name_ + "_SEED=" + std::to_string(seed_) + " SLUICE_" + name_ + "_ONLY=" + std::to_string(set);
}

// Even rule sets as sluice compiles them; odd ones split by shape, every
// other one of those with all tables sparse.
ClassifierGrouping RandomRulesTest::grouping_of(int set) {
    return set % 2 == 0 ? ClassifierGrouping::when_needed
           : set % 4 == 1 ? ClassifierGrouping::by_shape
                          : ClassifierGrouping::by_shape_sparse;
}

::testing::AssertionResult RandomRulesTest::apply_rule_set(int set, const std::string& yaml, uint32_t* groups) {
    Status applied =
        env_->apply(yaml, grouping_of(set), groups);
    if (!applied) return ::testing::AssertionFailure() << where(set) << ": " << applied.error().message << "\n" << yaml;
    clear_flows();
    return ::testing::AssertionSuccess();
}

void RandomRulesTest::clear_flows() {
    for (const char* map : {SLUICE_MAP_SESSIONS_V4, SLUICE_MAP_SESSIONS_V6, SLUICE_MAP_FLOW_CACHE})
        clear_map(env_->map_fd(map));
}

void RandomRulesTest::show_rule_set(int set, size_t disagreements, size_t packets, const std::string& yaml) {
    if (!disagreements || shown_ >= 2) return;
    ++shown_;
    ADD_FAILURE() << where(set) << ": " << disagreements << " disagreements in " << packets
                  << " packets; the rule set:\n" << yaml;
}

bool RandomRulesTest::check_run(const std::string& summary, size_t disagreements, size_t packets,
                                size_t min_packets, size_t grouped_sets, int rule_sets) {
    std::cout << summary << std::endl;
    EXPECT_EQ(disagreements, 0u);
    if (only_one()) return false;
    EXPECT_GE(packets, min_packets);
    EXPECT_GE(grouped_sets, static_cast<size_t>(rule_sets / 4)) << "too few rule sets split into groups";
    return true;
}

}  // namespace sluice::test::random_rules
