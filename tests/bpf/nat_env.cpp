#include "nat_env.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <cerrno>
#include <cstring>

#include "loader/nat_reservations.h"

extern "C" {
#include "zone.h"
}

namespace sluice::test {

// ------------------------------------------------------------------ configs

const char* const kLanOutInterfaceYaml = R"yaml(
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
)yaml";

const char* const kPortForwardsYaml = R"yaml(
nat:
  destination:
    - { name: web-in-v4, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.10, port: 80 } }
    - { name: dns-in-v4, from: untrust, destination: 198.18.100.1, protocol: udp, port: 5353,
        translate-to: { address: 198.18.1.10, port: 53 } }
    - { name: web-in-v6, from: untrust, destination: "2001:2:0:100::1", protocol: tcp, port: 8080,
        translate-to: { address: "2001:2:0:1::10", port: 80 } }
    - { name: dns-in-v6, from: untrust, destination: "2001:2:0:100::1", protocol: udp, port: 5353,
        translate-to: { address: "2001:2:0:1::10", port: 53 } }
)yaml";

// ------------------------------------------------------------------ Ipv6Prefix

Ipv6Prefix Ipv6Prefix::of(const Ipv6Addr& a, uint8_t len) {
    Ipv6Prefix p;
    p.addr = a.bytes;
    p.len = len;
    return p;
}

std::string Ipv6Prefix::str() const {
    Ipv6Addr a;
    a.bytes = addr;
    return a.str() + "/" + std::to_string(len);
}

namespace {
// The prefix with its host bits cleared.
std::array<uint8_t, 16> network_of(const Ipv6Prefix& p) {
    std::array<uint8_t, 16> out{};
    for (unsigned bit = 0; bit < p.len; ++bit) {
        unsigned byte = bit / 8, shift = 7 - bit % 8;
        out[byte] |= p.addr[byte] & (1u << shift);
    }
    return out;
}
}  // namespace

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

Ipv6Addr nptv6_map(const Ipv6Addr& addr, const Ipv6Prefix& inside, const Ipv6Prefix& outside) {
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

namespace {
// Zone id of an untagged interface, from the zones map the loader wrote.
uint16_t zone_of(int zones_fd, uint32_t ifindex) {
    zone_key k;
    std::memset(&k, 0, sizeof k);
    k.ifindex = ifindex;
    zone_value v;
    std::memset(&v, 0, sizeof v);
    EXPECT_EQ(bpf_map_lookup_elem(zones_fd, &k, &v), 0) << "ifindex " << ifindex << " has no zone";
    return v.zone_id;
}
}  // namespace

void NatTest::SetUp() {
    DatapathTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    trust_ = zone_of(env_->map_fd(SLUICE_MAP_ZONES), lan_if());
    untrust_ = zone_of(env_->map_fd(SLUICE_MAP_ZONES), wan_if());
    ASSERT_NE(trust_, 0);
    ASSERT_NE(untrust_, 0);
    ASSERT_NE(trust_, untrust_);
}

::testing::AssertionResult NatTest::apply_nat(const std::string& nat_yaml) {
    if (Status s = env_->apply(with_nat(nat_yaml)); !s)
        return ::testing::AssertionFailure() << s.error().message << "\nnat config:" << nat_yaml;
    auto written = write_interface_addresses(namespace_addresses());
    if (!written) return written;
    snapshot_stats();
    return ::testing::AssertionSuccess();
}

std::vector<InterfaceAddress> NatTest::namespace_addresses(int only_family) {
    auto all = read_interface_addresses();
    EXPECT_TRUE(all) << all.error().message;
    std::vector<InterfaceAddress> out;
    if (!all) return out;
    for (const auto& a : all.value())
        if (only_family == AF_UNSPEC || a.family == only_family) out.push_back(a);
    return out;
}

::testing::AssertionResult NatTest::write_interface_addresses(const std::vector<InterfaceAddress>& addresses) {
    auto written = write_nat_ifaddrs(env_->map_fd(SLUICE_MAP_NAT_IFADDRS), {lan_if(), wan_if()}, addresses);
    if (!written) return ::testing::AssertionFailure() << "nat_ifaddrs: " << written.error().message;
    return ::testing::AssertionSuccess();
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
    nat_port_key k;
    std::memset(&k, 0, sizeof k);
    if (v6)
        std::memcpy(k.addr, Ipv6Addr::parse(addr).bytes.data(), 16);
    else
        std::memcpy(k.addr, Ipv4Addr::parse(addr).bytes.data(), 4);
    k.port = htons(port);
    k.protocol = protocol;
    k.family = v6 ? SLUICE_FAMILY_IPV6 : SLUICE_FAMILY_IPV4;
    return lookup_reservation(env_->map_fd(SLUICE_MAP_NAT_PORTS), k);
}

size_t NatTest::reservations() {
    return count_entries(env_->map_fd(SLUICE_MAP_NAT_PORTS));
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
