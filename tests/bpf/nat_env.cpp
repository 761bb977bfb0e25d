#include "nat_env.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <cerrno>
#include <cstring>

namespace sluice::test {

// ------------------------------------------------------------------ NatPrefix

NatPrefix NatPrefix::v4(const Ipv4Addr& a, uint8_t len) {
    NatPrefix p;
    p.family = SLUICE_FAMILY_IPV4;
    std::memcpy(p.addr.data(), a.bytes.data(), 4);
    p.len = len;
    return p;
}

NatPrefix NatPrefix::v6(const Ipv6Addr& a, uint8_t len) {
    NatPrefix p;
    p.family = SLUICE_FAMILY_IPV6;
    std::memcpy(p.addr.data(), a.bytes.data(), 16);
    p.len = len;
    return p;
}

namespace {
bool prefix_bits_equal(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b, unsigned len) {
    for (unsigned bit = 0; bit < len; ++bit) {
        unsigned byte = bit / 8, shift = 7 - bit % 8;
        if (((a[byte] >> shift) & 1) != ((b[byte] >> shift) & 1)) return false;
    }
    return true;
}

// The prefix with its host bits cleared.
std::array<uint8_t, 16> network_of(const NatPrefix& p) {
    std::array<uint8_t, 16> out{};
    for (unsigned bit = 0; bit < p.len; ++bit) {
        unsigned byte = bit / 8, shift = 7 - bit % 8;
        out[byte] |= p.addr[byte] & (1u << shift);
    }
    return out;
}
}  // namespace

bool NatPrefix::covers(const NatPrefix& o) const {
    return family == o.family && len <= o.len && prefix_bits_equal(addr, o.addr, len);
}

bool NatPrefix::operator<(const NatPrefix& o) const {
    if (family != o.family) return family < o.family;
    if (len != o.len) return len < o.len;
    return addr < o.addr;
}

// ------------------------------------------------------------------ NatTables

NatTables::NatTables(const DatapathEnv& env) : env_(env) {
    runtime_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    uint32_t key = 0;
    EXPECT_EQ(bpf_map_lookup_elem(fd(SLUICE_MAP_RUNTIME_CONFIG), &key, &cfg), 0) << std::strerror(errno);
    gen_ = cfg.policy_generation & 1;
}

int NatTables::fd(const char* name) const {
    int f = env_.map_fd(name);
    EXPECT_GE(f, 0) << "no map " << name;
    return f;
}

uint16_t NatTables::zone(uint32_t ifindex) const {
    zone_key k;
    std::memset(&k, 0, sizeof k);
    k.ifindex = ifindex;
    zone_value v;
    std::memset(&v, 0, sizeof v);
    EXPECT_EQ(bpf_map_lookup_elem(fd(SLUICE_MAP_ZONES), &k, &v), 0) << "ifindex " << ifindex << " has no zone";
    return v.zone_id;
}

namespace {
template <typename K, typename V>
void update(int fd, const char* what, const K& k, const V& v) {
    EXPECT_EQ(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0) << what << ": " << std::strerror(errno);
}
}  // namespace

// Both families: the address bytes (4 or 16) as they go into the key.
void NatTables::destination_bytes(uint16_t zone_in, uint8_t protocol, const uint8_t* addr, const uint8_t* to,
                                  size_t len, uint16_t port, uint16_t to_port, uint32_t rule_id) {
    nat_dst_key k;
    std::memset(&k, 0, sizeof k);
    std::memcpy(k.addr, addr, len);
    k.port = htons(port);
    k.zone_in = zone_in;
    k.protocol = protocol;
    k.family = len == 4 ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
    k.generation = gen_;
    nat_dst_value v;
    std::memset(&v, 0, sizeof v);
    std::memcpy(v.addr, to, len);
    v.port = htons(to_port);
    v.rule_id = rule_id;
    update(fd(SLUICE_MAP_NAT_DST), "nat_dst", k, v);
}

void NatTables::destination(uint16_t zone_in, uint8_t protocol, const Ipv4Addr& addr, uint16_t port, const Ipv4Addr& to,
                            uint16_t to_port, uint32_t rule_id) {
    destination_bytes(zone_in, protocol, addr.bytes.data(), to.bytes.data(), 4, port, to_port, rule_id);
}

void NatTables::destination(uint16_t zone_in, uint8_t protocol, const Ipv6Addr& addr, uint16_t port, const Ipv6Addr& to,
                            uint16_t to_port, uint32_t rule_id) {
    destination_bytes(zone_in, protocol, addr.bytes.data(), to.bytes.data(), 16, port, to_port, rule_id);
}

void NatTables::prefix_rule(bool inbound, const NatPrefix& from, const NatPrefix& to, uint8_t kind, uint32_t rule_id) {
    EXPECT_EQ(from.family, to.family);
    EXPECT_EQ(from.len, to.len);
    nat_prefix_value v;
    std::memset(&v, 0, sizeof v);
    auto f = network_of(from), t = network_of(to);
    std::memcpy(v.from, f.data(), 16);
    std::memcpy(v.to, t.data(), 16);
    v.prefix_len = from.len;
    v.kind = kind;
    v.rule_id = rule_id;
    if (from.family == SLUICE_FAMILY_IPV4) {
        policy_lpm_key_v4 k;
        std::memset(&k, 0, sizeof k);
        k.prefixlen = 8u + from.len;
        k.generation = gen_;
        std::memcpy(k.addr, f.data(), 4);
        update(fd(inbound ? SLUICE_MAP_NAT_MAP_IN_V4 : SLUICE_MAP_NAT_MAP_OUT_V4), "nat_map_*_v4", k, v);
    } else {
        policy_lpm_key_v6 k;
        std::memset(&k, 0, sizeof k);
        k.prefixlen = 8u + from.len;
        k.generation = gen_;
        std::memcpy(k.addr, f.data(), 16);
        update(fd(inbound ? SLUICE_MAP_NAT_MAP_IN_V6 : SLUICE_MAP_NAT_MAP_OUT_V6), "nat_map_*_v6", k, v);
    }
}

void NatTables::static_map(const NatPrefix& inside, const NatPrefix& outside, uint32_t rule_id) {
    prefix_rule(true, outside, inside, NAT_PREFIX_STATIC, rule_id);
    prefix_rule(false, inside, outside, NAT_PREFIX_STATIC, rule_id);
}

void NatTables::nptv6(const NatPrefix& inside, const NatPrefix& outside, uint32_t rule_id) {
    prefix_rule(true, outside, inside, NAT_PREFIX_NPTV6, rule_id);
    prefix_rule(false, inside, outside, NAT_PREFIX_NPTV6, rule_id);
}

// An LPM lookup returns one entry, so every entry holds its own rules and
// those of every shorter prefix covering it (what the compiler does).
void NatTables::write_rule_bits(const char* map, std::map<NatPrefix, uint64_t>& table, const NatPrefix& p,
                                uint64_t bit) {
    NatPrefix net = p;
    net.addr = network_of(p);
    table[net] |= bit;
    for (const auto& [prefix, own] : table) {
        (void)own;
        uint64_t bits = 0;
        for (const auto& [other, other_bits] : table)
            if (other.covers(prefix)) bits |= other_bits;
        nat_rule_bits v{bits};
        if (prefix.family == SLUICE_FAMILY_IPV4) {
            policy_lpm_key_v4 k;
            std::memset(&k, 0, sizeof k);
            k.prefixlen = 8u + prefix.len;
            k.generation = gen_;
            std::memcpy(k.addr, prefix.addr.data(), 4);
            update(fd(map), map, k, v);
        } else {
            policy_lpm_key_v6 k;
            std::memset(&k, 0, sizeof k);
            k.prefixlen = 8u + prefix.len;
            k.generation = gen_;
            std::memcpy(k.addr, prefix.addr.data(), 16);
            update(fd(map), map, k, v);
        }
    }
}

void NatTables::source_rule(int bit, uint16_t from_zone, uint16_t to_zone, const nat_source_rule& rule,
                            const std::vector<NatPrefix>& sources, const std::vector<NatPrefix>& destinations) {
    ASSERT_GE(bit, 0);
    ASSERT_LT(bit, NAT_MAX_SOURCE_RULES);
    const uint64_t b = 1ull << bit;
    uint64_t& zb = zone_bits_[{from_zone, to_zone}];
    zb |= b;
    policy_zone_pair_key zk;
    std::memset(&zk, 0, sizeof zk);
    zk.from_zone = from_zone;
    zk.to_zone = to_zone;
    zk.generation = gen_;
    nat_rule_bits zv{zb};
    update(fd(SLUICE_MAP_NAT_SRC_ZONES), "nat_src_zones", zk, zv);
    for (const auto& p : sources) {
        if (p.family == SLUICE_FAMILY_IPV4)
            write_rule_bits(SLUICE_MAP_NAT_SRC_SADDR_V4, s4_, p, b);
        else
            write_rule_bits(SLUICE_MAP_NAT_SRC_SADDR_V6, s6_, p, b);
    }
    for (const auto& p : destinations) {
        if (p.family == SLUICE_FAMILY_IPV4)
            write_rule_bits(SLUICE_MAP_NAT_SRC_DADDR_V4, d4_, p, b);
        else
            write_rule_bits(SLUICE_MAP_NAT_SRC_DADDR_V6, d6_, p, b);
    }
    uint32_t idx = gen_ * NAT_MAX_SOURCE_RULES + static_cast<uint32_t>(bit);
    update(fd(SLUICE_MAP_NAT_SRC_RULES), "nat_src_rules", idx, rule);
}

void NatTables::source_interface(int bit, uint16_t from_zone, uint16_t to_zone, std::vector<NatPrefix> sources,
                                 std::vector<NatPrefix> destinations, uint32_t rule_id) {
    nat_source_rule r;
    std::memset(&r, 0, sizeof r);
    r.rule_id = rule_id;
    r.kind = NAT_SOURCE_INTERFACE;
    source_rule(bit, from_zone, to_zone, r, sources, destinations);
}

void NatTables::source_pool(int bit, uint16_t from_zone, uint16_t to_zone, uint16_t pool_index,
                            std::vector<NatPrefix> sources, std::vector<NatPrefix> destinations, uint32_t rule_id) {
    nat_source_rule r;
    std::memset(&r, 0, sizeof r);
    r.rule_id = rule_id;
    r.kind = NAT_SOURCE_POOL;
    r.pool_index = pool_index;
    source_rule(bit, from_zone, to_zone, r, sources, destinations);
}

void NatTables::pool(uint16_t index, const NatPoolSpec& spec) {
    nat_pool p;
    std::memset(&p, 0, sizeof p);
    ASSERT_LE(spec.ranges.size(), static_cast<size_t>(NAT_POOL_MAX_RANGES));
    for (size_t i = 0; i < spec.ranges.size(); ++i) {
        std::memcpy(p.ranges[i].first, spec.ranges[i].first.data(), 16);
        p.ranges[i].count = spec.ranges[i].second;
        p.address_count += spec.ranges[i].second;
    }
    p.port_first = spec.port_first;
    p.port_last = spec.port_last;
    p.family = spec.family;
    p.flags = spec.persistent ? NAT_POOL_PERSISTENT : 0;
    p.pool_index = index;
    uint32_t slot = gen_ * NAT_POOL_SLOTS + index * 2u + (spec.family == SLUICE_FAMILY_IPV6 ? 1u : 0u);
    update(fd(SLUICE_MAP_NAT_POOLS), "nat_pools", slot, p);
}

void NatTables::ifaddr(uint32_t ifindex, std::optional<Ipv4Addr> v4, std::optional<Ipv6Addr> v6, uint16_t port_first,
                       uint16_t port_last) {
    nat_ifaddr a;
    std::memset(&a, 0, sizeof a);
    if (v4) {
        std::memcpy(&a.v4, v4->bytes.data(), 4);
        a.has_v4 = 1;
    }
    if (v6) {
        std::memcpy(a.v6, v6->bytes.data(), 16);
        a.has_v6 = 1;
    }
    a.port_first = port_first;
    a.port_last = port_last;
    update(fd(SLUICE_MAP_NAT_IFADDRS), "nat_ifaddrs", ifindex, a);
}

namespace {
std::optional<nat_port_value> lookup_port(int fd, const nat_port_key& k) {
    nat_port_value v;
    std::memset(&v, 0, sizeof v);
    if (bpf_map_lookup_elem(fd, &k, &v) != 0) return std::nullopt;
    return v;
}
}  // namespace

std::optional<nat_port_value> NatTables::reservation_bytes(const uint8_t* addr, size_t len, uint16_t port,
                                                           uint8_t protocol) const {
    nat_port_key k;
    std::memset(&k, 0, sizeof k);
    std::memcpy(k.addr, addr, len);
    k.port = htons(port);
    k.protocol = protocol;
    k.family = len == 4 ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
    return lookup_port(fd(SLUICE_MAP_NAT_PORTS), k);
}

std::optional<nat_port_value> NatTables::reservation(const Ipv4Addr& addr, uint16_t port, uint8_t protocol) const {
    return reservation_bytes(addr.bytes.data(), 4, port, protocol);
}

std::optional<nat_port_value> NatTables::reservation(const Ipv6Addr& addr, uint16_t port, uint8_t protocol) const {
    return reservation_bytes(addr.bytes.data(), 16, port, protocol);
}

size_t NatTables::reservations() const {
    return count_entries(fd(SLUICE_MAP_NAT_PORTS));
}

// ------------------------------------------------------- independent checks

uint16_t ones_sum(const uint8_t* data, size_t len, uint32_t initial) {
    uint64_t sum = initial;
    for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i]) << 8 | data[i + 1];
    if (len % 2) sum += static_cast<uint32_t>(data[len - 1]) << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(sum);
}

namespace {
struct L4Where {
    size_t l3 = 0, l4 = 0, len = 0;
    int version = 0;
    uint8_t proto = 0;
};

// Offsets read straight from the headers (no extension headers here).
std::optional<L4Where> l4_where(const Bytes& f) {
    if (f.size() < 14) return std::nullopt;
    L4Where w;
    w.l3 = 14;
    uint16_t type = static_cast<uint16_t>(f[12] << 8 | f[13]);
    if (type == 0x0800 && f.size() >= 34) {
        w.version = 4;
        size_t ihl = (f[14] & 0x0f) * 4u;
        w.l4 = w.l3 + ihl;
        w.len = static_cast<size_t>(f[16] << 8 | f[17]) - ihl;
        w.proto = f[23];
    } else if (type == 0x86dd && f.size() >= 54) {
        w.version = 6;
        w.l4 = w.l3 + 40;
        w.len = static_cast<size_t>(f[18] << 8 | f[19]);
        w.proto = f[20];
    } else {
        return std::nullopt;
    }
    if (w.l4 + w.len > f.size()) return std::nullopt;
    return w;
}

size_t checksum_offset(uint8_t proto) {
    return proto == proto::kTcp ? 16 : proto == proto::kUdp ? 6 : 2;
}
}  // namespace

uint16_t pseudo_header_sum(const Bytes& f) {
    auto w = l4_where(f);
    EXPECT_TRUE(w) << "not an IP frame with a whole L4 segment";
    if (!w) return 0;
    uint32_t initial = w->proto + static_cast<uint32_t>(w->len & 0xffff) + static_cast<uint32_t>(w->len >> 16);
    if (w->version == 4) return ones_sum(&f[w->l3 + 12], 8, initial);
    return ones_sum(&f[w->l3 + 8], 32, initial);
}

Bytes complete_partial_checksum(const Bytes& frame) {
    Bytes f = frame;
    auto w = l4_where(f);
    EXPECT_TRUE(w);
    if (!w) return f;
    uint16_t c = static_cast<uint16_t>(~ones_sum(&f[w->l4], w->len));
    if (w->proto == proto::kUdp && c == 0) c = 0xffff;
    size_t at = w->l4 + checksum_offset(w->proto);
    f[at] = static_cast<uint8_t>(c >> 8);
    f[at + 1] = static_cast<uint8_t>(c);
    return f;
}

uint16_t l4_checksum_field(const Bytes& frame) {
    auto w = l4_where(frame);
    EXPECT_TRUE(w);
    if (!w) return 0;
    size_t at = w->l4 + checksum_offset(w->proto);
    return static_cast<uint16_t>(frame[at] << 8 | frame[at + 1]);
}

Ipv6Addr nptv6_map(const Ipv6Addr& addr, const NatPrefix& inside, const NatPrefix& outside) {
    // Section 3.1: the checksum (one's-complement sum) of each prefix, both
    // extended with zeros; section 3.2: the adjustment is their difference.
    auto in_net = network_of(inside), out_net = network_of(outside);
    uint32_t adj =
        static_cast<uint32_t>(ones_sum(in_net.data(), 16)) + static_cast<uint16_t>(~ones_sum(out_net.data(), 16));
    while (adj >> 16) adj = (adj & 0xffff) + (adj >> 16);
    Ipv6Addr out = addr;
    for (unsigned bit = 0; bit < outside.len; ++bit) {
        unsigned byte = bit / 8, mask = 1u << (7 - bit % 8);
        out.bytes[byte] = static_cast<uint8_t>((out.bytes[byte] & ~mask) | (out_net[byte] & mask));
    }
    auto word = [&](int i) { return static_cast<uint16_t>(out.bytes[2 * i] << 8 | out.bytes[2 * i + 1]); };
    // Sections 3.4 / 3.6: bits 48-63 for a /48 or shorter prefix, else the
    // first word of the interface identifier that is not 0xffff.
    int k = -1;
    if (outside.len <= 48) {
        k = 3;
    } else {
        for (int i = 4; i < 8 && k < 0; ++i)
            if (word(i) != 0xffff) k = i;
    }
    EXPECT_GE(k, 0) << "unmappable address";
    if (k < 0) return out;
    uint32_t w = word(k) + adj;
    while (w >> 16) w = (w & 0xffff) + (w >> 16);
    if (w == 0xffff) w = 0;
    out.bytes[2 * k] = static_cast<uint8_t>(w >> 8);
    out.bytes[2 * k + 1] = static_cast<uint8_t>(w);
    return out;
}

std::optional<Bytes> quoted_frame(const Bytes& f) {
    auto w = l4_where(f);
    if (!w) return std::nullopt;
    if (!(w->proto == proto::kIcmp || w->proto == proto::kIcmpv6)) return std::nullopt;
    size_t inner = w->l4 + 8;
    if (inner >= f.size()) return std::nullopt;
    Bytes out(f.begin(), f.begin() + 12);
    bool v6 = (f[inner] >> 4) == 6;
    out.push_back(v6 ? 0x86 : 0x08);
    out.push_back(v6 ? 0xdd : 0x00);
    out.insert(out.end(), f.begin() + static_cast<long>(inner), f.begin() + static_cast<long>(w->l4 + w->len));
    return out;
}

Result<TcRunResult> run_tc(int prog_fd, const Bytes& frame, uint32_t ifindex) {
    Bytes data = frame;
    Bytes out(data.size() + 4096);
    struct __sk_buff ctx;
    std::memset(&ctx, 0, sizeof ctx);
    ctx.ifindex = ifindex;
    LIBBPF_OPTS(bpf_test_run_opts, opts);
    opts.data_in = data.data();
    opts.data_size_in = static_cast<__u32>(data.size());
    opts.data_out = out.data();
    opts.data_size_out = static_cast<__u32>(out.size());
    opts.ctx_in = &ctx;
    opts.ctx_size_in = sizeof ctx;
    opts.repeat = 1;
    if (bpf_prog_test_run_opts(prog_fd, &opts) != 0)
        return make_error(std::string("BPF_PROG_TEST_RUN on tc_egress_prog: ") + std::strerror(errno));
    TcRunResult r;
    r.retval = static_cast<int>(opts.retval);
    out.resize(std::min<size_t>(opts.data_size_out, out.size()));
    r.output = std::move(out);
    return r;
}

// ------------------------------------------------------------------ flows

const char* l4_name(L4Kind k) {
    return k == L4Kind::tcp ? "tcp" : k == L4Kind::udp ? "udp" : "echo";
}

uint8_t l4_protocol(L4Kind k, bool v6) {
    if (k == L4Kind::tcp) return proto::kTcp;
    if (k == L4Kind::udp) return proto::kUdp;
    return v6 ? proto::kIcmpv6 : proto::kIcmp;
}

Bytes request(PacketBuilder b, L4Kind k, bool v6, uint16_t cport, uint16_t sport) {
    switch (k) {
        case L4Kind::tcp:
            return b.tcp(cport, sport).seq(1000).syn().window(64240).build();
        case L4Kind::udp:
            return b.udp(cport, sport).payload_pattern(37, 0x41).build();
        case L4Kind::echo:
            return (v6 ? b.icmpv6_echo_request(cport, 7) : b.icmp_echo_request(cport, 7)).payload_pattern(56).build();
    }
    return {};
}

Bytes response(PacketBuilder b, L4Kind k, bool v6, uint16_t sport, uint16_t cport) {
    switch (k) {
        case L4Kind::tcp:
            return b.tcp(sport, cport).seq(7000).ack_seq(1001).syn().ack().window(65160).build();
        case L4Kind::udp:
            return b.udp(sport, cport).payload_pattern(61, 0x90).build();
        case L4Kind::echo:
            return (v6 ? b.icmpv6_echo_reply(cport, 7) : b.icmp_echo_reply(cport, 7)).payload_pattern(56).build();
    }
    return {};
}

uint16_t frame_sport(const Bytes& frame) {
    auto f = parse_frame(frame);
    EXPECT_TRUE(f && f->l4_present) << summarize_frame(frame);
    if (!f) return 0;
    return (f->l4_proto == proto::kIcmp || f->l4_proto == proto::kIcmpv6) ? f->icmp_id : f->sport;
}

uint16_t frame_dport(const Bytes& frame) {
    auto f = parse_frame(frame);
    EXPECT_TRUE(f && f->l4_present) << summarize_frame(frame);
    if (!f) return 0;
    return (f->l4_proto == proto::kIcmp || f->l4_proto == proto::kIcmpv6) ? f->icmp_id : f->dport;
}

std::pair<uint16_t, uint16_t> request_ports(L4Kind k, uint16_t cport, uint16_t sport) {
    return k == L4Kind::echo ? std::pair<uint16_t, uint16_t>{cport, 0} : std::pair<uint16_t, uint16_t>{cport, sport};
}

std::pair<uint16_t, uint16_t> response_ports(L4Kind k, uint16_t sport, uint16_t cport) {
    return k == L4Kind::echo ? std::pair<uint16_t, uint16_t>{0, cport} : std::pair<uint16_t, uint16_t>{sport, cport};
}

// ------------------------------------------------------------------ NatTest

std::string NatTest::config_yaml() const {
    // Outbound as in kTestConfigYaml; inbound only to the LAN host's web and
    // DNS ports, so a flow reaches it only if policy sees the translated
    // destination (address and port).
    return R"yaml(
interfaces:
  lan0: { zone: trust }
  lan0.100: { zone: trust }
  wan0: { zone: untrust }

zones:
  trust: {}
  untrust: {}

applications:
  http:   { protocol: tcp, destination-port: [80, 8080] }
  dns:    { protocol: udp, destination-port: 53 }
  ping:   { protocol: icmp }
  ping6:  { protocol: icmpv6 }
  web-in: { protocol: tcp, destination-port: 80 }
  dns-in: { protocol: udp, destination-port: 53 }

policies:
  - name: lan-out
    from: trust
    to: untrust
    application: [http, dns, ping, ping6]
    action: permit
  - name: server-in
    from: untrust
    to: trust
    destination: [198.18.1.10, "2001:2:0:1::10"]
    application: [web-in, dns-in, ping, ping6]
    action: permit
  - name: nothing-in
    from: untrust
    to: trust
    action: deny

default-action: deny
)yaml";
}

void NatTest::SetUp() {
    DatapathTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    nat_ = std::make_unique<NatTables>(*env_);
    trust_ = nat_->zone(lan_if());
    untrust_ = nat_->zone(wan_if());
    ASSERT_NE(trust_, 0);
    ASSERT_NE(untrust_, 0);
    ASSERT_NE(trust_, untrust_);
}

PacketBuilder NatTest::from_lan(bool v6, std::string_view src, std::string_view dst) const {
    PacketBuilder b;
    b.eth(kLanHostMac, lan_mac());
    if (v6)
        b.ipv6(src, dst).hop_limit(64);
    else
        b.ipv4(src, dst).ttl(64);
    return b;
}
PacketBuilder NatTest::from_wan(bool v6, std::string_view src, std::string_view dst) const {
    PacketBuilder b;
    b.eth(kWanHostMac, wan_mac());
    if (v6)
        b.ipv6(src, dst).hop_limit(64);
    else
        b.ipv4(src, dst).ttl(64);
    return b;
}
PacketBuilder NatTest::to_lan(bool v6, std::string_view src, std::string_view dst) const {
    PacketBuilder b;
    b.eth(lan_mac(), kLanHostMac);
    if (v6)
        b.ipv6(src, dst).hop_limit(63);
    else
        b.ipv4(src, dst).ttl(63);
    return b;
}
PacketBuilder NatTest::to_wan(bool v6, std::string_view src, std::string_view dst) const {
    PacketBuilder b;
    b.eth(wan_mac(), kWanHostMac);
    if (v6)
        b.ipv6(src, dst).hop_limit(63);
    else
        b.ipv4(src, dst).ttl(63);
    return b;
}

std::optional<session_value> NatTest::session(bool v6, std::string_view src, std::string_view dst, uint16_t sport,
                                              uint16_t dport, uint8_t protocol) {
    if (v6) return session6(Ipv6Addr::parse(src), Ipv6Addr::parse(dst), sport, dport, protocol);
    return session4(Ipv4Addr::parse(src), Ipv4Addr::parse(dst), sport, dport, protocol);
}

std::optional<nat_port_value> NatTest::reservation(bool v6, std::string_view addr, uint16_t port, uint8_t protocol) {
    if (v6) return nat_->reservation(Ipv6Addr::parse(addr), port, protocol);
    return nat_->reservation(Ipv4Addr::parse(addr), port, protocol);
}

std::string addr_text(const __be32* a, bool v6) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(v6 ? AF_INET6 : AF_INET, a, buf, sizeof buf);
    return buf;
}

XdpRunResult NatTest::expect_nat(const std::string& what, const Bytes& in, uint32_t ifindex, int verdict,
                                 const std::optional<Bytes>& expected, bool verify) {
    auto r = run(in, ifindex);
    EXPECT_EQ(xdp_verdict_name(r.retval), xdp_verdict_name(verdict))
        << what << "\ncounters: " << describe_delta(stats_delta()) << "\nin:  " << summarize_frame(in)
        << "\nout: " << summarize_frame(r.output);
    if (expected) {
        EXPECT_EQ(r.output, *expected) << what << "\n" << hex_diff(*expected, r.output);
    }
    if (verify && r.retval == XDP_REDIRECT) {
        auto report = verify_checksums(r.output);
        EXPECT_TRUE(report.ok()) << what << ": " << report.describe() << "\n" << summarize_frame(r.output);
    }
    return r;
}

}  // namespace sluice::test
