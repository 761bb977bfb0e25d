#include "packet_builder.h"

#include <arpa/inet.h>

#include <algorithm>

#include <cstdio>
#include <stdexcept>

namespace sluice::test {

namespace {

void put16(Bytes& out, uint16_t v) {
    out.push_back(static_cast<uint8_t>(v >> 8));
    out.push_back(static_cast<uint8_t>(v));
}

void put32(Bytes& out, uint32_t v) {
    put16(out, static_cast<uint16_t>(v >> 16));
    put16(out, static_cast<uint16_t>(v));
}

void set16(Bytes& out, size_t at, uint16_t v) {
    out[at] = static_cast<uint8_t>(v >> 8);
    out[at + 1] = static_cast<uint8_t>(v);
}

// Byte by byte: GCC 12 at -O3 reports a false -Warray-bounds for a range
// insert here.
void append(Bytes& out, const Bytes& more) {
    out.reserve(out.size() + more.size());
    for (uint8_t b : more) out.push_back(b);
}

template <size_t N>
void append(Bytes& out, const std::array<uint8_t, N>& more) {
    out.insert(out.end(), more.begin(), more.end());
}

// Pads IPv6 option bytes so that 2 + options is a multiple of 8 (Pad1 / PadN).
Bytes pad_ipv6_options(Bytes options) {
    size_t total = 2 + options.size();
    size_t missing = (8 - total % 8) % 8;
    if (missing == 1) {
        options.push_back(0);  // Pad1
    } else if (missing >= 2) {
        options.push_back(1);  // PadN
        options.push_back(static_cast<uint8_t>(missing - 2));
        options.insert(options.end(), missing - 2, 0);
    }
    return options;
}

}  // namespace

// ---------------------------------------------------------------- addresses

Mac Mac::parse(std::string_view text) {
    Mac mac;
    unsigned v[6];
    std::string s(text);
    if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
        throw std::invalid_argument("bad MAC address: " + s);
    for (int i = 0; i < 6; ++i) mac.bytes[i] = static_cast<uint8_t>(v[i]);
    return mac;
}

std::string Mac::str() const {
    char buf[18];
    std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", bytes[0], bytes[1], bytes[2],
                  bytes[3], bytes[4], bytes[5]);
    return buf;
}

Ipv4Addr Ipv4Addr::parse(std::string_view text) {
    Ipv4Addr a;
    std::string s(text);
    if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) != 1)
        throw std::invalid_argument("bad IPv4 address: " + s);
    return a;
}

std::string Ipv4Addr::str() const {
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, bytes.data(), buf, sizeof buf);
    return buf;
}

Ipv6Addr Ipv6Addr::parse(std::string_view text) {
    Ipv6Addr a;
    std::string s(text);
    if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) != 1)
        throw std::invalid_argument("bad IPv6 address: " + s);
    return a;
}

std::string Ipv6Addr::str() const {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
    return buf;
}

// ---------------------------------------------------------------- checksum

uint32_t checksum_add(uint32_t sum, const uint8_t* data, size_t len) {
    size_t i = 0;
    for (; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
    if (i < len) sum += static_cast<uint32_t>(data[i] << 8);
    return sum;
}

uint16_t checksum_fold(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum & 0xffff);
}

// ---------------------------------------------------------------- layer access

template <typename T>
T& PacketBuilder::last(const char* what) {
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it)
        if (auto* p = std::get_if<T>(&*it)) return *p;
    throw std::logic_error(std::string("PacketBuilder: no ") + what + " layer to modify");
}

PacketBuilder& PacketBuilder::eth(const Mac& src, const Mac& dst) {
    layers_.push_back(Eth{src, dst, std::nullopt});
    return *this;
}

PacketBuilder& PacketBuilder::eth(std::string_view src, std::string_view dst) {
    return eth(Mac::parse(src), Mac::parse(dst));
}

PacketBuilder& PacketBuilder::ethertype(uint16_t type) {
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
        if (auto* v = std::get_if<Vlan>(&*it)) { v->type = type; return *this; }
        if (auto* e = std::get_if<Eth>(&*it)) { e->type = type; return *this; }
    }
    throw std::logic_error("PacketBuilder: ethertype() without eth/vlan");
}

PacketBuilder& PacketBuilder::vlan(uint16_t vid, uint8_t pcp, uint16_t tpid) {
    layers_.push_back(Vlan{tpid, static_cast<uint16_t>((pcp & 7) << 13 | (vid & 0xfff)), std::nullopt});
    return *this;
}

PacketBuilder& PacketBuilder::arp_request(const Mac& sender_mac, const Ipv4Addr& sender_ip,
                                          const Ipv4Addr& target_ip) {
    layers_.push_back(Arp{sender_mac, sender_ip, target_ip});
    return *this;
}

PacketBuilder& PacketBuilder::ipv4(const Ipv4Addr& src, const Ipv4Addr& dst) {
    Ipv4 h;
    h.src = src;
    h.dst = dst;
    layers_.push_back(h);
    return *this;
}

PacketBuilder& PacketBuilder::ipv4(std::string_view src, std::string_view dst) {
    return ipv4(Ipv4Addr::parse(src), Ipv4Addr::parse(dst));
}

PacketBuilder& PacketBuilder::ttl(uint8_t v) { last<Ipv4>("IPv4").ttl = v; return *this; }
PacketBuilder& PacketBuilder::tos(uint8_t v) { last<Ipv4>("IPv4").tos = v; return *this; }
PacketBuilder& PacketBuilder::ip_id(uint16_t v) { last<Ipv4>("IPv4").id = v; return *this; }
PacketBuilder& PacketBuilder::dont_fragment(bool on) { last<Ipv4>("IPv4").df = on; return *this; }
PacketBuilder& PacketBuilder::more_fragments(bool on) { last<Ipv4>("IPv4").mf = on; return *this; }

PacketBuilder& PacketBuilder::frag_offset(uint16_t offset_bytes) {
    if (offset_bytes % 8) throw std::invalid_argument("fragment offset must be a multiple of 8");
    last<Ipv4>("IPv4").frag_offset = offset_bytes;
    return *this;
}

PacketBuilder& PacketBuilder::ip_options(Bytes options) {
    while (options.size() % 4) options.push_back(0);
    last<Ipv4>("IPv4").options = std::move(options);
    return *this;
}

PacketBuilder& PacketBuilder::total_length(uint16_t v) { last<Ipv4>("IPv4").total_length = v; return *this; }
PacketBuilder& PacketBuilder::ihl(uint8_t v) { last<Ipv4>("IPv4").ihl = v; return *this; }

PacketBuilder& PacketBuilder::ip_version(uint8_t version) {
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
        if (auto* h = std::get_if<Ipv4>(&*it)) { h->version = version; return *this; }
        if (auto* h = std::get_if<Ipv6>(&*it)) { h->version = version; return *this; }
    }
    throw std::logic_error("PacketBuilder: ip_version() without an IP layer");
}

PacketBuilder& PacketBuilder::ipv4_checksum(uint16_t v) { last<Ipv4>("IPv4").checksum = v; return *this; }
PacketBuilder& PacketBuilder::corrupt_ipv4_checksum() { last<Ipv4>("IPv4").corrupt_checksum = true; return *this; }

PacketBuilder& PacketBuilder::ipv6(const Ipv6Addr& src, const Ipv6Addr& dst) {
    Ipv6 h;
    h.src = src;
    h.dst = dst;
    layers_.push_back(h);
    return *this;
}

PacketBuilder& PacketBuilder::ipv6(std::string_view src, std::string_view dst) {
    return ipv6(Ipv6Addr::parse(src), Ipv6Addr::parse(dst));
}

PacketBuilder& PacketBuilder::hop_limit(uint8_t v) { last<Ipv6>("IPv6").hop_limit = v; return *this; }
PacketBuilder& PacketBuilder::flow_label(uint32_t v) { last<Ipv6>("IPv6").flow = v & 0xfffff; return *this; }
PacketBuilder& PacketBuilder::payload_length(uint16_t v) { last<Ipv6>("IPv6").payload_length = v; return *this; }

PacketBuilder& PacketBuilder::hop_by_hop(Bytes options) {
    layers_.push_back(Ipv6Ext{proto::kHopByHop, pad_ipv6_options(std::move(options)), {}, {}});
    return *this;
}

PacketBuilder& PacketBuilder::destination_options(Bytes options) {
    layers_.push_back(Ipv6Ext{proto::kDestOpts, pad_ipv6_options(std::move(options)), {}, {}});
    return *this;
}

PacketBuilder& PacketBuilder::routing(uint8_t segments_left, std::vector<Ipv6Addr> segments) {
    if (segments.empty()) {
        // One segment: the final destination (the enclosing IPv6 header's dst).
        segments.push_back(last<Ipv6>("IPv6").dst);
    }
    Bytes data;
    data.push_back(static_cast<uint8_t>(segments.size() - 1));  // last entry
    data.push_back(0);                                          // flags
    put16(data, 0);                                             // tag
    for (const auto& s : segments) append(data, s.bytes);
    return routing_raw(4, segments_left, std::move(data));
}

PacketBuilder& PacketBuilder::routing_raw(uint8_t routing_type, uint8_t segments_left, Bytes data) {
    Bytes body{routing_type, segments_left};
    append(body, data);
    while ((2 + body.size()) % 8) body.push_back(0);
    layers_.push_back(Ipv6Ext{proto::kRouting, std::move(body), {}, {}});
    return *this;
}

PacketBuilder& PacketBuilder::fragment_header(uint16_t offset_bytes, bool more, uint32_t id) {
    if (offset_bytes % 8) throw std::invalid_argument("fragment offset must be a multiple of 8");
    Bytes body;
    put16(body, static_cast<uint16_t>(offset_bytes | (more ? 1 : 0)));  // offset<<3 == bytes
    put32(body, id);
    // The fragment header's second byte is "reserved", not a length: 0.
    layers_.push_back(Ipv6Ext{proto::kFragment, std::move(body), {}, uint8_t{0}});
    return *this;
}

PacketBuilder& PacketBuilder::ext_length(uint8_t v) { last<Ipv6Ext>("IPv6 extension").hdr_ext_len = v; return *this; }

PacketBuilder& PacketBuilder::protocol(uint8_t p) {
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
        if (auto* h = std::get_if<Ipv4>(&*it)) { h->protocol = p; return *this; }
        if (auto* h = std::get_if<Ipv6>(&*it)) { h->next_header = p; return *this; }
        if (auto* h = std::get_if<Ipv6Ext>(&*it)) { h->next_header = p; return *this; }
    }
    throw std::logic_error("PacketBuilder: protocol() without an IP layer");
}

PacketBuilder& PacketBuilder::tcp(uint16_t sport, uint16_t dport) {
    Tcp t;
    t.sport = sport;
    t.dport = dport;
    layers_.push_back(t);
    return *this;
}

PacketBuilder& PacketBuilder::seq(uint32_t v) { last<Tcp>("TCP").seq = v; return *this; }
PacketBuilder& PacketBuilder::ack_seq(uint32_t v) { last<Tcp>("TCP").ack = v; return *this; }
PacketBuilder& PacketBuilder::flags(uint8_t v) { last<Tcp>("TCP").flags = v; return *this; }
PacketBuilder& PacketBuilder::syn() { last<Tcp>("TCP").flags |= tcp_flag::kSyn; return *this; }
PacketBuilder& PacketBuilder::ack() { last<Tcp>("TCP").flags |= tcp_flag::kAck; return *this; }
PacketBuilder& PacketBuilder::fin() { last<Tcp>("TCP").flags |= tcp_flag::kFin; return *this; }
PacketBuilder& PacketBuilder::rst() { last<Tcp>("TCP").flags |= tcp_flag::kRst; return *this; }
PacketBuilder& PacketBuilder::psh() { last<Tcp>("TCP").flags |= tcp_flag::kPsh; return *this; }
PacketBuilder& PacketBuilder::window(uint16_t v) { last<Tcp>("TCP").window = v; return *this; }

PacketBuilder& PacketBuilder::tcp_options(Bytes options) {
    while (options.size() % 4) options.push_back(0);
    last<Tcp>("TCP").options = std::move(options);
    return *this;
}

PacketBuilder& PacketBuilder::data_offset(uint8_t v) { last<Tcp>("TCP").data_offset = v; return *this; }

PacketBuilder& PacketBuilder::udp(uint16_t sport, uint16_t dport) {
    Udp u;
    u.sport = sport;
    u.dport = dport;
    layers_.push_back(u);
    return *this;
}

PacketBuilder& PacketBuilder::udp_length(uint16_t v) { last<Udp>("UDP").length = v; return *this; }

PacketBuilder& PacketBuilder::icmp(uint8_t type, uint8_t code, uint32_t rest) {
    layers_.push_back(Icmp{false, type, code, rest, std::nullopt});
    return *this;
}

PacketBuilder& PacketBuilder::icmp_echo_request(uint16_t id, uint16_t sq) {
    return icmp(8, 0, static_cast<uint32_t>(id) << 16 | sq);
}

PacketBuilder& PacketBuilder::icmp_echo_reply(uint16_t id, uint16_t sq) {
    return icmp(0, 0, static_cast<uint32_t>(id) << 16 | sq);
}

PacketBuilder& PacketBuilder::icmp_error(uint8_t type, uint8_t code, const Bytes& quoted, uint32_t rest) {
    icmp(type, code, rest);
    return payload(quoted);
}

PacketBuilder& PacketBuilder::icmpv6(uint8_t type, uint8_t code, uint32_t rest) {
    layers_.push_back(Icmp{true, type, code, rest, std::nullopt});
    return *this;
}

PacketBuilder& PacketBuilder::icmpv6_echo_request(uint16_t id, uint16_t sq) {
    return icmpv6(128, 0, static_cast<uint32_t>(id) << 16 | sq);
}

PacketBuilder& PacketBuilder::icmpv6_echo_reply(uint16_t id, uint16_t sq) {
    return icmpv6(129, 0, static_cast<uint32_t>(id) << 16 | sq);
}

PacketBuilder& PacketBuilder::icmpv6_error(uint8_t type, uint8_t code, const Bytes& quoted, uint32_t rest) {
    icmpv6(type, code, rest);
    return payload(quoted);
}

PacketBuilder& PacketBuilder::l4_checksum(uint16_t value) {
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
        if (auto* t = std::get_if<Tcp>(&*it)) { t->checksum = value; return *this; }
        if (auto* u = std::get_if<Udp>(&*it)) { u->checksum = value; return *this; }
        if (auto* c = std::get_if<Icmp>(&*it)) { c->checksum = value; return *this; }
    }
    throw std::logic_error("PacketBuilder: l4_checksum() without an L4 layer");
}

PacketBuilder& PacketBuilder::corrupt_l4_checksum() {
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
        if (auto* t = std::get_if<Tcp>(&*it)) { t->corrupt_checksum = true; return *this; }
        if (auto* u = std::get_if<Udp>(&*it)) { u->corrupt_checksum = true; return *this; }
        if (auto* c = std::get_if<Icmp>(&*it)) { c->corrupt_checksum = true; return *this; }
    }
    throw std::logic_error("PacketBuilder: corrupt_l4_checksum() without an L4 layer");
}

PacketBuilder& PacketBuilder::payload(const Bytes& data) {
    layers_.push_back(Payload{data});
    return *this;
}

PacketBuilder& PacketBuilder::payload(std::string_view text) {
    return payload(Bytes(text.begin(), text.end()));
}

PacketBuilder& PacketBuilder::payload_pattern(size_t len, uint8_t first) {
    Bytes data(len);
    for (size_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>(first + i);
    return payload(data);
}

PacketBuilder& PacketBuilder::truncate(size_t n) {
    truncate_ = n;
    return *this;
}

// ---------------------------------------------------------------- serialization

uint16_t PacketBuilder::next_type_l2(size_t i) const {
    if (i + 1 >= layers_.size()) return 0x88b5;  // "local experimental": nothing follows
    const Layer& next = layers_[i + 1];
    if (auto* v = std::get_if<Vlan>(&next)) return v->tpid;
    if (std::holds_alternative<Ipv4>(next)) return 0x0800;
    if (std::holds_alternative<Ipv6>(next)) return 0x86dd;
    if (std::holds_alternative<Arp>(next)) return 0x0806;
    return 0x88b5;
}

uint8_t PacketBuilder::next_proto_l3(size_t i) const {
    if (i + 1 >= layers_.size()) return proto::kNoNext;
    const Layer& next = layers_[i + 1];
    if (auto* e = std::get_if<Ipv6Ext>(&next)) return e->type;
    if (std::holds_alternative<Tcp>(next)) return proto::kTcp;
    if (std::holds_alternative<Udp>(next)) return proto::kUdp;
    if (auto* c = std::get_if<Icmp>(&next)) return c->v6 ? proto::kIcmpv6 : proto::kIcmp;
    if (std::holds_alternative<Ipv4>(next)) return 4;   // IP-in-IP
    if (std::holds_alternative<Ipv6>(next)) return 41;
    return proto::kNoNext;
}

uint32_t PacketBuilder::pseudo_header_sum(size_t l4_index, size_t l4_len, uint8_t proto) const {
    for (size_t j = l4_index; j-- > 0;) {
        Bytes ph;
        if (auto* h4 = std::get_if<Ipv4>(&layers_[j])) {
            append(ph, h4->src.bytes);
            append(ph, h4->dst.bytes);
            ph.push_back(0);
            ph.push_back(proto);
            put16(ph, static_cast<uint16_t>(l4_len));
        } else if (auto* h6 = std::get_if<Ipv6>(&layers_[j])) {
            append(ph, h6->src.bytes);
            append(ph, h6->dst.bytes);
            put32(ph, static_cast<uint32_t>(l4_len));
            ph.insert(ph.end(), {0, 0, 0, proto});
        } else {
            continue;
        }
        return checksum_add(0, ph.data(), ph.size());
    }
    return 0;
}

Bytes PacketBuilder::serialize_layer(size_t i, const Bytes& rest) const {
    Bytes out;
    const Layer& layer = layers_[i];
    if (auto* e = std::get_if<Eth>(&layer)) {
        append(out, e->dst.bytes);
        append(out, e->src.bytes);
        put16(out, e->type.value_or(next_type_l2(i)));
    } else if (auto* v = std::get_if<Vlan>(&layer)) {
        // The TPID belongs to the previous header's type field; a tag is TCI + type.
        put16(out, v->tci);
        put16(out, v->type.value_or(next_type_l2(i)));
    } else if (auto* a = std::get_if<Arp>(&layer)) {
        put16(out, 1);       // Ethernet
        put16(out, 0x0800);  // IPv4
        out.push_back(6);
        out.push_back(4);
        put16(out, 1);  // request
        append(out, a->sha.bytes);
        append(out, a->spa.bytes);
        out.insert(out.end(), 6, 0);
        append(out, a->tpa.bytes);
    } else if (auto* h = std::get_if<Ipv4>(&layer)) {
        size_t hlen = 20 + h->options.size();
        uint8_t ihl = h->ihl.value_or(static_cast<uint8_t>(hlen / 4));
        out.push_back(static_cast<uint8_t>(h->version << 4 | (ihl & 0xf)));
        out.push_back(h->tos);
        put16(out, h->total_length.value_or(static_cast<uint16_t>(hlen + rest.size())));
        put16(out, h->id);
        put16(out, static_cast<uint16_t>((h->df ? 0x4000 : 0) | (h->mf ? 0x2000 : 0) |
                                         (h->frag_offset / 8)));
        out.push_back(h->ttl);
        out.push_back(h->protocol.value_or(next_proto_l3(i)));
        put16(out, 0);
        append(out, h->src.bytes);
        append(out, h->dst.bytes);
        append(out, h->options);
        uint16_t sum = checksum_fold(checksum_add(0, out.data(), out.size()));
        if (h->corrupt_checksum) sum ^= 0x00ff;
        set16(out, 10, h->checksum.value_or(sum));
    } else if (auto* h6 = std::get_if<Ipv6>(&layer)) {
        put32(out, static_cast<uint32_t>(h6->version) << 28 | static_cast<uint32_t>(h6->tclass) << 20 |
                       h6->flow);
        put16(out, h6->payload_length.value_or(static_cast<uint16_t>(rest.size())));
        out.push_back(h6->next_header.value_or(next_proto_l3(i)));
        out.push_back(h6->hop_limit);
        append(out, h6->src.bytes);
        append(out, h6->dst.bytes);
    } else if (auto* x = std::get_if<Ipv6Ext>(&layer)) {
        out.push_back(x->next_header.value_or(next_proto_l3(i)));
        out.push_back(x->hdr_ext_len.value_or(static_cast<uint8_t>((2 + x->body.size()) / 8 - 1)));
        append(out, x->body);
    } else if (auto* t = std::get_if<Tcp>(&layer)) {
        size_t hlen = 20 + t->options.size();
        put16(out, t->sport);
        put16(out, t->dport);
        put32(out, t->seq);
        put32(out, t->ack);
        out.push_back(static_cast<uint8_t>(t->data_offset.value_or(static_cast<uint8_t>(hlen / 4)) << 4));
        out.push_back(t->flags);
        put16(out, t->window);
        put16(out, 0);
        put16(out, t->urgent);
        append(out, t->options);
        size_t len = out.size() + rest.size();
        uint32_t sum = pseudo_header_sum(i, len, proto::kTcp);
        sum = checksum_add(sum, out.data(), out.size());
        sum = checksum_add(sum, rest.data(), rest.size());
        uint16_t c = checksum_fold(sum);
        if (t->corrupt_checksum) c ^= 0x00ff;
        set16(out, 16, t->checksum.value_or(c));
    } else if (auto* u = std::get_if<Udp>(&layer)) {
        uint16_t len = u->length.value_or(static_cast<uint16_t>(8 + rest.size()));
        put16(out, u->sport);
        put16(out, u->dport);
        put16(out, len);
        put16(out, 0);
        uint32_t sum = pseudo_header_sum(i, len, proto::kUdp);
        sum = checksum_add(sum, out.data(), out.size());
        sum = checksum_add(sum, rest.data(), rest.size());
        uint16_t c = checksum_fold(sum);
        if (c == 0) c = 0xffff;  // 0 means "no checksum" in UDP
        if (u->corrupt_checksum) c ^= 0x00ff;
        set16(out, 6, u->checksum.value_or(c));
    } else if (auto* c = std::get_if<Icmp>(&layer)) {
        out.push_back(c->type);
        out.push_back(c->code);
        put16(out, 0);
        put32(out, c->rest);
        uint32_t sum = c->v6 ? pseudo_header_sum(i, out.size() + rest.size(), proto::kIcmpv6) : 0;
        sum = checksum_add(sum, out.data(), out.size());
        sum = checksum_add(sum, rest.data(), rest.size());
        uint16_t s = checksum_fold(sum);
        if (c->corrupt_checksum) s ^= 0x00ff;
        set16(out, 2, c->checksum.value_or(s));
    } else if (auto* p = std::get_if<Payload>(&layer)) {
        append(out, p->data);
    }
    append(out, rest);
    return out;
}

Bytes PacketBuilder::serialize(size_t from) const {
    Bytes rest;
    for (size_t i = layers_.size(); i-- > from;) rest = serialize_layer(i, rest);
    return rest;
}

Bytes PacketBuilder::build() const {
    Bytes out = serialize(0);
    if (truncate_ && *truncate_ < out.size()) out.resize(*truncate_);
    return out;
}

Bytes PacketBuilder::build_ip() const {
    for (size_t i = 0; i < layers_.size(); ++i)
        if (std::holds_alternative<Ipv4>(layers_[i]) || std::holds_alternative<Ipv6>(layers_[i]))
            return serialize(i);
    throw std::logic_error("PacketBuilder: build_ip() without an IP layer");
}

Bytes quote(const Bytes& ip_packet, size_t max_len) {
    return Bytes(ip_packet.begin(), ip_packet.begin() + static_cast<std::ptrdiff_t>(
                                                           std::min(max_len, ip_packet.size())));
}

std::string hex(const Bytes& bytes) {
    std::string out;
    char buf[4];
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
        if (i) out += (i % 16 == 0) ? '\n' : ' ';
        out += buf;
    }
    return out;
}

Bytes from_hex(std::string_view text) {
    Bytes out;
    int nibble = -1;
    for (char ch : text) {
        int v;
        if (ch >= '0' && ch <= '9') v = ch - '0';
        else if (ch >= 'a' && ch <= 'f') v = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F') v = ch - 'A' + 10;
        else continue;
        if (nibble < 0) {
            nibble = v;
        } else {
            out.push_back(static_cast<uint8_t>(nibble << 4 | v));
            nibble = -1;
        }
    }
    if (nibble >= 0) throw std::invalid_argument("from_hex: odd number of digits");
    return out;
}

}  // namespace sluice::test
