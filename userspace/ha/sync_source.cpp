#include "ha/sync_source.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <algorithm>
#include <cstring>

#include "ha/flow_record.h"
#include "loader/nat_reservations.h"
#include "loader/session_table.h"

namespace sluice::ha {
namespace {

std::vector<uint8_t> key_bytes_of(const FlowKey& k) {
    std::vector<uint8_t> b = {k.family, k.protocol, uint8_t(k.src_port >> 8), uint8_t(k.src_port),
                              uint8_t(k.dst_port >> 8), uint8_t(k.dst_port)};
    b.insert(b.end(), k.src.begin(), k.src.end());
    b.insert(b.end(), k.dst.begin(), k.dst.end());
    return b;
}

// The held port's rule, from the reservation itself (0 when none).
uint32_t nat_rule_of(const SessionMaps& maps, const SessionEntry& initiator) {
    auto k = held_reservation(initiator);
    nat_port_value v{};
    return k && bpf_map_lookup_elem(maps.nat_ports, &*k, &v) == 0 ? v.rule_id : 0;
}

// Adds the flow of entry `e` (either direction) to `out`, or counts it as
// unmovable. False when its other entry is missing.
bool add_flow(const SessionMaps& maps, const SessionEntry& e, uint64_t now_ns, Changes& out) {
    SessionEntry initiator = e, reply = reverse_of(e);
    if (e.value.flags & SESSION_F_REPLY) std::swap(initiator, reply);
    if (!read_session_entry(maps.sessions_v4, maps.sessions_v6, initiator) ||
        !read_session_entry(maps.sessions_v4, maps.sessions_v6, reply))
        return false;
    if (!unmovable_reason(initiator.value).empty()) {
        ++out.unmovable;
        return true;
    }
    auto record = record_of(initiator, reply, now_ns);
    if (!record) return false;
    record->nat_rule_id = nat_rule_of(maps, initiator);
    out.flows.push_back(*record);
    return true;
}

}  // namespace

void ChangedKeys::add(const ha_event& e) {
    FlowKey k;
    k.family = e.family;
    k.protocol = e.protocol;
    std::memcpy(k.src.data(), e.src_addr, 16);
    std::memcpy(k.dst.data(), e.dst_addr, 16);
    k.src_port = ntohs(e.src_port);
    k.dst_port = ntohs(e.dst_port);
    if (seen_.insert(key_bytes_of(k)).second) keys_.push_back(k);
}

std::vector<FlowKey> ChangedKeys::take() {
    seen_.clear();
    return std::move(keys_);
}

Changes read_changes(const SessionMaps& maps, const std::vector<FlowKey>& keys, uint64_t now_ns) {
    Changes out;
    std::set<std::vector<uint8_t>> done;  // a flow named by both its entries' keys goes once
    for (const FlowKey& k : keys) {
        SessionEntry e = entry_key_of(k);
        if (!read_session_entry(maps.sessions_v4, maps.sessions_v6, e)) {
            out.deletes.push_back(k);
            continue;
        }
        SessionEntry initiator = (e.value.flags & SESSION_F_REPLY) ? reverse_of(e) : e;
        if (!done.insert(key_bytes_of(key_of(initiator))).second) continue;
        if (!add_flow(maps, e, now_ns, out)) out.deletes.push_back(key_of(initiator));
    }
    return out;
}

Result<Changes> read_all(const SessionMaps& maps, uint64_t now_ns) {
    auto all = dump_sessions(maps.sessions_v4, maps.sessions_v6);
    if (!all.ok()) return all.error();
    Changes out;
    for (const SessionEntry& e : all.value())
        if (!(e.value.flags & SESSION_F_REPLY)) add_flow(maps, e, now_ns, out);
    return out;
}

namespace {

// `items` in messages of `type`, at most `per` each, into their `field`.
template <typename T>
void chunk(const std::vector<T>& items, size_t per, MessageType type, std::vector<T> Message::*field,
           std::vector<Message>& out) {
    for (size_t i = 0; i < items.size(); i += per) {
        Message m;
        m.header.type = type;
        (m.*field).assign(items.begin() + i, items.begin() + std::min(items.size(), i + per));
        out.push_back(std::move(m));
    }
}

}  // namespace

std::vector<Message> pack(const Changes& changes) {
    std::vector<Message> out;
    chunk(changes.flows, kFlowsPerDatagram, MessageType::sessions, &Message::flows, out);
    chunk(changes.deletes, kDeletesPerDatagram, MessageType::deletes, &Message::deletes, out);
    return out;
}

}  // namespace sluice::ha
