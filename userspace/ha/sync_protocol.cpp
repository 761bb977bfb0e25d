#include "ha/sync_protocol.h"

#include <netinet/in.h>

#include <cstring>

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::ha {
namespace {

// Big-endian writer and reader over a byte buffer; the reader remembers
// running past the end instead of reading it.
class Writer {
public:
    void u8(uint8_t v) { out_.push_back(v); }
    void u16(uint16_t v) { u8(v >> 8); u8(v & 0xff); }
    void u32(uint32_t v) { u16(v >> 16); u16(v & 0xffff); }
    void u64(uint64_t v) { u32(v >> 32); u32(v & 0xffffffff); }
    void bytes(const std::array<uint8_t, 16>& b) { out_.insert(out_.end(), b.begin(), b.end()); }
    std::vector<uint8_t>& out() { return out_; }

private:
    std::vector<uint8_t> out_;
};

class Reader {
public:
    Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
    uint8_t u8() { return ok(1) ? p_[pos_++] : 0; }
    uint16_t u16() { uint16_t hi = u8(); return static_cast<uint16_t>(hi << 8 | u8()); }
    uint32_t u32() { uint32_t hi = u16(); return hi << 16 | u16(); }
    uint64_t u64() { uint64_t hi = u32(); return hi << 32 | u32(); }
    void bytes(std::array<uint8_t, 16>& b) {
        if (ok(16)) std::memcpy(b.data(), p_ + pos_, 16), pos_ += 16;
    }
    bool overrun() const { return overrun_; }

private:
    bool ok(size_t k) {
        if (pos_ + k > n_) overrun_ = true;
        return !overrun_;
    }
    const uint8_t* p_;
    size_t n_;
    size_t pos_ = 0;
    bool overrun_ = false;
};

void write_key(Writer& w, const FlowKey& k) {
    w.u8(k.family);
    w.u8(k.protocol);
    w.bytes(k.src);
    w.bytes(k.dst);
    w.u16(k.src_port);
    w.u16(k.dst_port);
}

FlowKey read_key(Reader& r) {
    FlowKey k;
    k.family = r.u8();
    k.protocol = r.u8();
    r.bytes(k.src);
    r.bytes(k.dst);
    k.src_port = r.u16();
    k.dst_port = r.u16();
    return k;
}

void write_flow(Writer& w, const FlowRecord& f) {
    write_key(w, f.key);
    w.u8(f.tcp_state);
    w.u8(f.flags);
    w.u8(f.verdict);
    w.u8(f.nat_flags);
    w.u16(f.zone_in);
    w.u16(f.zone_out);
    w.u32(f.policy_id);
    w.u16(f.ruleset_id);
    w.bytes(f.nat_src);
    w.bytes(f.nat_dst);
    w.u16(f.nat_src_port);
    w.u16(f.nat_dst_port);
    w.u32(f.nat_rule_id);
    w.u32(f.age_ms);
    w.u32(f.idle_ms);
    w.u32(f.reply_idle_ms);
    w.u64(f.packets);
    w.u64(f.bytes);
    w.u64(f.reply_packets);
    w.u64(f.reply_bytes);
}

FlowRecord read_flow(Reader& r) {
    FlowRecord f;
    f.key = read_key(r);
    f.tcp_state = r.u8();
    f.flags = r.u8();
    f.verdict = r.u8();
    f.nat_flags = r.u8();
    f.zone_in = r.u16();
    f.zone_out = r.u16();
    f.policy_id = r.u32();
    f.ruleset_id = r.u16();
    r.bytes(f.nat_src);
    r.bytes(f.nat_dst);
    f.nat_src_port = r.u16();
    f.nat_dst_port = r.u16();
    f.nat_rule_id = r.u32();
    f.age_ms = r.u32();
    f.idle_ms = r.u32();
    f.reply_idle_ms = r.u32();
    f.packets = r.u64();
    f.bytes = r.u64();
    f.reply_packets = r.u64();
    f.reply_bytes = r.u64();
    return f;
}

bool ipv4_tail_zero(const std::array<uint8_t, 16>& a) {
    for (size_t i = 4; i < 16; ++i)
        if (a[i]) return false;
    return true;
}

// Empty when the key could be a session key of this datapath.
std::string key_problem(const FlowKey& k) {
    if (k.family != SLUICE_FAMILY_IPV4 && k.family != SLUICE_FAMILY_IPV6)
        return "family " + std::to_string(k.family) + " (expected 4 or 6)";
    if (k.family == SLUICE_FAMILY_IPV4 && (!ipv4_tail_zero(k.src) || !ipv4_tail_zero(k.dst)))
        return "an IPv4 key with bytes past its address";
    return "";
}

constexpr uint8_t kKnownFlowFlags = SESSION_F_SEEN_REPLY | SESSION_F_FIN_INITIATOR | SESSION_F_FIN_RESPONDER;
constexpr uint8_t kKnownNatFlags = SESSION_NAT_SRC | SESSION_NAT_DST | SESSION_NAT_PORT_HELD;

std::string flow_problem(const FlowRecord& f) {
    if (auto p = key_problem(f.key); !p.empty()) return p;
    const bool tcp = f.key.protocol == IPPROTO_TCP;
    if (f.tcp_state >= TCP_SESSION_STATE_COUNT) return "TCP state " + std::to_string(f.tcp_state);
    if (tcp != (f.tcp_state != TCP_SESSION_NONE))
        return tcp ? "a TCP flow without a TCP state" : "a TCP state on a flow that is not TCP";
    if (f.flags & ~kKnownFlowFlags) return "unknown session flags " + std::to_string(f.flags);
    if (f.verdict > SESSION_VERDICT_RESET) return "verdict " + std::to_string(f.verdict);
    if (f.nat_flags & ~kKnownNatFlags) return "unknown NAT flags " + std::to_string(f.nat_flags);
    if ((f.nat_flags & SESSION_NAT_PORT_HELD) && !(f.nat_flags & SESSION_NAT_SRC))
        return "a held NAT port without source NAT";
    if (f.zone_in == 0 || f.zone_in >= SLUICE_MAX_ZONES || f.zone_out == 0 || f.zone_out >= SLUICE_MAX_ZONES)
        return "zone " + std::to_string(f.zone_in) + " -> " + std::to_string(f.zone_out);
    if (f.key.family == SLUICE_FAMILY_IPV4 && (!ipv4_tail_zero(f.nat_src) || !ipv4_tail_zero(f.nat_dst)))
        return "an IPv4 translation with bytes past its address";
    return "";
}

Decoded reject(RejectReason reason, std::string detail) {
    Decoded d;
    d.reason = reason;
    d.detail = std::move(detail);
    return d;
}

}  // namespace

std::string to_string(MessageType type) {
    switch (type) {
    case MessageType::heartbeat: return "heartbeat";
    case MessageType::sessions: return "sessions";
    case MessageType::deletes: return "deletes";
    case MessageType::bulk_request: return "bulk-request";
    case MessageType::bulk_end: return "bulk-end";
    }
    return "type " + std::to_string(static_cast<int>(type));
}

std::string to_string(RejectReason reason) {
    switch (reason) {
    case RejectReason::truncated: return "truncated";
    case RejectReason::bad_magic: return "bad-magic";
    case RejectReason::bad_version: return "bad-version";
    case RejectReason::bad_type: return "bad-type";
    case RejectReason::bad_length: return "bad-length";
    case RejectReason::bad_record: return "bad-record";
    case RejectReason::count_: break;
    }
    return "unknown";
}

std::vector<uint8_t> encode(const Message& m) {
    Writer w;
    size_t count = 0;
    switch (m.header.type) {
    case MessageType::heartbeat: count = m.heartbeat.groups.size(); break;
    case MessageType::sessions: count = m.flows.size(); break;
    case MessageType::deletes: count = m.deletes.size(); break;
    default: break;
    }
    w.u32(kMagic);
    w.u8(kVersion);
    w.u8(static_cast<uint8_t>(m.header.type));
    w.u8(m.header.node_id);
    w.u8(0);
    w.u16(0);  // length, filled in below
    w.u16(static_cast<uint16_t>(count));
    w.u32(m.header.seq);
    w.u32(m.header.config_hash);
    w.u32(m.header.boot_id);
    switch (m.header.type) {
    case MessageType::heartbeat:
        for (const GroupHeartbeat& g : m.heartbeat.groups) {
            w.u8(g.group);
            w.u8(g.priority);
            w.u8(g.active);
            w.u8(g.flags);
        }
        break;
    case MessageType::sessions:
        for (const FlowRecord& f : m.flows) write_flow(w, f);
        break;
    case MessageType::deletes:
        for (const FlowKey& k : m.deletes) write_key(w, k);
        break;
    default: break;
    }
    std::vector<uint8_t>& out = w.out();
    out[8] = static_cast<uint8_t>(out.size() >> 8);
    out[9] = static_cast<uint8_t>(out.size() & 0xff);
    return out;
}

Decoded decode(const uint8_t* data, size_t size) {
    if (size < kHeaderSize)
        return reject(RejectReason::truncated, std::to_string(size) + " bytes, shorter than a header");
    Reader r(data, size);
    if (r.u32() != kMagic) return reject(RejectReason::bad_magic, "not a sluice HA message");
    const uint8_t version = r.u8();
    if (version != kVersion)
        return reject(RejectReason::bad_version, "protocol version " + std::to_string(version) + ", this node speaks " +
                                                     std::to_string(kVersion));
    Decoded d;
    Message& m = d.message;
    const uint8_t type = r.u8();
    if (type < 1 || type > 5) return reject(RejectReason::bad_type, "message type " + std::to_string(type));
    m.header.type = static_cast<MessageType>(type);
    m.header.node_id = r.u8();
    r.u8();
    const uint16_t length = r.u16();
    const uint16_t count = r.u16();
    m.header.seq = r.u32();
    m.header.config_hash = r.u32();
    m.header.boot_id = r.u32();
    if (length != size)
        return reject(RejectReason::bad_length,
                      "header says " + std::to_string(length) + " bytes, the datagram has " + std::to_string(size));
    size_t record = 0;
    switch (m.header.type) {
    case MessageType::heartbeat: record = 4; break;
    case MessageType::sessions: record = kFlowRecordSize; break;
    case MessageType::deletes: record = kFlowKeySize; break;
    default: record = 0; break;
    }
    if (kHeaderSize + count * record != size)
        return reject(RejectReason::bad_length, std::to_string(count) + " records of " + std::to_string(record) +
                                                    " bytes do not fill " + std::to_string(size - kHeaderSize));
    for (uint16_t i = 0; i < count; ++i) {
        std::string problem;
        switch (m.header.type) {
        case MessageType::heartbeat: {
            GroupHeartbeat g;
            g.group = r.u8();
            g.priority = r.u8();
            g.active = r.u8();
            g.flags = r.u8();
            if (g.group == 0 || g.active > 1 || (g.flags & ~kGroupReleasing))
                problem = "group record " + std::to_string(g.group);
            m.heartbeat.groups.push_back(g);
            break;
        }
        case MessageType::sessions:
            m.flows.push_back(read_flow(r));
            problem = flow_problem(m.flows.back());
            break;
        case MessageType::deletes:
            m.deletes.push_back(read_key(r));
            problem = key_problem(m.deletes.back());
            break;
        default: break;
        }
        if (!problem.empty())
            return reject(RejectReason::bad_record, "record " + std::to_string(i) + ": " + problem);
    }
    if (r.overrun()) return reject(RejectReason::truncated, "records run past the datagram");
    d.ok = true;
    return d;
}

}  // namespace sluice::ha
