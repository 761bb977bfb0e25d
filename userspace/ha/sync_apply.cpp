#include "ha/sync_apply.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "ha/flow_record.h"
#include "loader/nat_reservations.h"

namespace sluice::ha {
namespace {

bool holds_port(const session_value& v) { return (v.nat.flags & SESSION_NAT_PORT_HELD) != 0; }

std::string flow_text(const SessionEntry& e) {
    return protocol_name(e.protocol) + " " + endpoint_text(e.family, e.src_addr, e.src_port) + " -> " +
           endpoint_text(e.family, e.dst_addr, e.dst_port);
}

}  // namespace

Status SyncApplier::remove_existing(const FlowKey& key, bool* existed) {
    *existed = false;
    SessionEntry first = entry_key_of(key);
    if (!read_session_entry(maps_.sessions_v4, maps_.sessions_v6, first)) return {};
    *existed = true;
    // The tuple may be the reply entry of a flow the other way round; either
    // way the flow is both entries.
    SessionEntry initiator = first, reply = reverse_of(first);
    if (first.value.flags & SESSION_F_REPLY) {
        std::swap(initiator, reply);
        // Its value (the translation, the held port) is the initiator's own.
        if (!read_session_entry(maps_.sessions_v4, maps_.sessions_v6, initiator)) initiator.value.flags = SESSION_F_REPLY;
    }
    for (SessionEntry* e : {&reply, &initiator}) {
        auto s = delete_session_entry(maps_.sessions_v4, maps_.sessions_v6, *e);
        if (!s && s.error().sys_errno != ENOENT) return s;
    }
    if (auto pk = held_reservation(initiator))
        if (auto s = release_reservation(maps_.nat_ports, *pk); !s)
            return with_context("releasing the NAT port of " + flow_text(initiator), s.error());
    return {};
}

Status SyncApplier::apply(const FlowRecord& record, uint64_t now_ns, uint32_t config_generation) {
    if (record.zone_in > zone_count_ || record.zone_out > zone_count_) {
        ++counters_.flows_refused;
        return make_error("a synced flow names zone " +
                          std::to_string(record.zone_in > zone_count_ ? record.zone_in : record.zone_out) +
                          ", this node's config has " + std::to_string(zone_count_) +
                          ": do both nodes run the same file?");
    }
    const FlowEntries flow = entries_of(record, now_ns, config_generation);

    // An entry already on the tuple: the same flow (an update) is simply
    // overwritten; another flow (the tuple was reused) goes first.
    SessionEntry old = flow.initiator;
    if (read_session_entry(maps_.sessions_v4, maps_.sessions_v6, old)) {
        const bool same_flow = !(old.value.flags & SESSION_F_REPLY) && same_key(reverse_of(old), flow.reply) &&
                               holds_port(old.value) == holds_port(flow.initiator.value);
        if (!same_flow) {
            bool existed = false;
            if (auto s = remove_existing(record.key, &existed); !s) return s;
            ++counters_.flows_replaced;
        }
    }
    for (const SessionEntry* e : {&flow.reply, &flow.initiator})
        if (auto s = write_session_entry(maps_.sessions_v4, maps_.sessions_v6, *e); !s) {
            ++counters_.flows_refused;
            return s;
        }
    if (auto pk = held_reservation(flow.initiator)) {
        nat_port_value pv{};
        std::memcpy(pv.inside_addr, flow.initiator.src_addr, 16);
        pv.inside_port = flow.initiator.src_port;
        pv.rule_id = record.nat_rule_id;
        pv.created_ns = flow.initiator.value.created_ns;
        if (bpf_map_update_elem(maps_.nat_ports, &*pk, &pv, BPF_ANY) != 0) {
            ++counters_.flows_refused;
            return errno_error("cannot reserve the NAT port of " + flow_text(flow.initiator), errno);
        }
    }
    ++counters_.flows_written;
    return {};
}

Status SyncApplier::remove(const FlowKey& key) {
    bool existed = false;
    if (auto s = remove_existing(key, &existed); !s) return s;
    ++(existed ? counters_.deletes_done : counters_.deletes_unknown);
    return {};
}

}  // namespace sluice::ha
