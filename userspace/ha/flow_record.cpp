#include "ha/flow_record.h"

#include <arpa/inet.h>

#include <cstring>

namespace sluice::ha {
namespace {

void addr_to_bytes(const uint32_t in[4], std::array<uint8_t, 16>& out) { std::memcpy(out.data(), in, 16); }
void bytes_to_addr(const std::array<uint8_t, 16>& in, uint32_t out[4]) { std::memcpy(out, in.data(), 16); }

uint32_t age_ms(uint64_t now_ns, uint64_t then_ns) {
    if (then_ns == 0 || then_ns >= now_ns) return 0;
    const uint64_t ms = (now_ns - then_ns) / 1000000;
    return ms > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(ms);
}

uint64_t back_from(uint64_t now_ns, uint32_t ms) {
    const uint64_t d = uint64_t(ms) * 1000000;
    return d < now_ns ? now_ns - d : 1;
}

constexpr uint8_t kSyncedFlags = SESSION_F_SEEN_REPLY | SESSION_F_FIN_INITIATOR | SESSION_F_FIN_RESPONDER;

}  // namespace

FlowKey key_of(const SessionEntry& e) {
    FlowKey k;
    k.family = e.family;
    k.protocol = e.protocol;
    addr_to_bytes(e.src_addr, k.src);
    addr_to_bytes(e.dst_addr, k.dst);
    k.src_port = ntohs(e.src_port);
    k.dst_port = ntohs(e.dst_port);
    return k;
}

SessionEntry entry_key_of(const FlowKey& k) {
    SessionEntry e;
    e.family = k.family;
    e.protocol = k.protocol;
    bytes_to_addr(k.src, e.src_addr);
    bytes_to_addr(k.dst, e.dst_addr);
    e.src_port = htons(k.src_port);
    e.dst_port = htons(k.dst_port);
    return e;
}

std::string unmovable_reason(const session_value& v) {
    if (v.punt_flags & SESSION_PUNT_INSPECT) return "relayed by the inspection stage (its sockets are on this node)";
    if (v.punt_flags & SESSION_PUNT_SPLICED) return "spliced after inspection (its sequence deltas are on this node)";
    if (v.punt_flags & SESSION_PUNT_SYNPROXY) return "in the SYN proxy's handshake";
    return "";
}

std::optional<FlowRecord> record_of(const SessionEntry& initiator, const SessionEntry& reply, uint64_t now_ns) {
    const session_value& v = initiator.value;
    if (v.flags & SESSION_F_REPLY) return std::nullopt;
    FlowRecord r;
    r.key = key_of(initiator);
    r.tcp_state = v.tcp_state;
    r.flags = v.flags & kSyncedFlags;
    r.verdict = v.verdict;
    r.zone_in = v.zone_in;
    r.zone_out = v.zone_out;
    r.policy_id = v.policy_id;
    r.ruleset_id = v.ruleset_id;
    if (has_translation(v)) {
        r.nat_flags = v.nat.flags;
        std::memcpy(r.nat_src.data(), v.nat.new_src_addr, 16);
        std::memcpy(r.nat_dst.data(), v.nat.new_dst_addr, 16);
        r.nat_src_port = ntohs(v.nat.new_src_port);
        r.nat_dst_port = ntohs(v.nat.new_dst_port);
    }
    r.age_ms = age_ms(now_ns, v.created_ns);
    r.idle_ms = age_ms(now_ns, v.last_seen_ns);
    r.reply_idle_ms = age_ms(now_ns, reply.value.last_seen_ns);
    r.packets = v.packets;
    r.bytes = v.bytes;
    r.reply_packets = reply.value.packets;
    r.reply_bytes = reply.value.bytes;
    return r;
}

FlowEntries entries_of(const FlowRecord& r, uint64_t now_ns, uint32_t config_generation) {
    FlowEntries out;
    SessionEntry& i = out.initiator;
    i = entry_key_of(r.key);
    session_value& v = i.value;
    v = session_value{};
    v.created_ns = back_from(now_ns, r.age_ms);
    v.last_seen_ns = back_from(now_ns, r.idle_ms);
    v.packets = r.packets;
    v.bytes = r.bytes;
    v.policy_id = r.policy_id;
    v.zone_in = r.zone_in;
    v.zone_out = r.zone_out;
    v.tcp_state = r.tcp_state;
    v.flags = r.flags & kSyncedFlags;
    v.verdict = r.verdict;
    v.ruleset_id = r.ruleset_id;
    v.policy_generation = config_generation;
    const uint8_t nat = r.nat_flags & (SESSION_NAT_SRC | SESSION_NAT_DST);
    if (nat) {
        v.nat.flags = r.nat_flags;
        std::memcpy(v.nat.new_src_addr, r.nat_src.data(), 16);
        std::memcpy(v.nat.new_dst_addr, r.nat_dst.data(), 16);
        v.nat.new_src_port = htons(r.nat_src_port);
        v.nat.new_dst_port = htons(r.nat_dst_port);
    }

    // The reply entry, as session_create writes it: keyed by the reverse of
    // the tuple the initiator's packets leave with; translating back.
    SessionEntry& rep = out.reply;
    rep = reverse_of(i);
    session_value& w = rep.value;
    w = v;
    w.packets = r.reply_packets;
    w.bytes = r.reply_bytes;
    w.last_seen_ns = back_from(now_ns, r.reply_idle_ms);
    w.zone_in = v.zone_out;
    w.zone_out = v.zone_in;
    w.flags = SESSION_F_REPLY | (v.flags & kSyncedFlags);
    w.nat = session_nat{};
    if (nat) {
        std::memcpy(w.nat.new_src_addr, i.dst_addr, 16);
        std::memcpy(w.nat.new_dst_addr, i.src_addr, 16);
        w.nat.new_src_port = i.dst_port;
        w.nat.new_dst_port = i.src_port;
        w.nat.flags = ((nat & SESSION_NAT_DST) ? SESSION_NAT_SRC : 0) | ((nat & SESSION_NAT_SRC) ? SESSION_NAT_DST : 0);
    }
    return out;
}

}  // namespace sluice::ha
