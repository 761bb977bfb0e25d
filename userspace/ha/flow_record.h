// A flow as the sync protocol carries it (sync_protocol.h FlowRecord) and
// as the session maps hold it (two SessionEntry, loader/session_table.h).
// entries_of() rebuilds both entries exactly as session_create
// (bpf/conntrack.bpf.h) made them, so a synced flow on the standby is the
// flow the active node has: tests/bpf/ha_flow_record_test.cpp checks that
// against the datapath's own entries.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "ha/sync_protocol.h"
#include "loader/session_table.h"

namespace sluice::ha {

FlowKey key_of(const SessionEntry& e);
SessionEntry entry_key_of(const FlowKey& k);

// Why a flow cannot move to the peer, or empty. Flows the inspection stage
// holds or has spliced (their sockets and sequence deltas live on this
// node) and flows still in the SYN proxy's handshake stay here.
std::string unmovable_reason(const session_value& initiator);

// The record of a flow from its two entries; nullopt when `initiator` is a
// reply entry. `now_ns` is this node's coarse clock (coarse_now_ns()).
std::optional<FlowRecord> record_of(const SessionEntry& initiator, const SessionEntry& reply, uint64_t now_ns);

struct FlowEntries {
    SessionEntry initiator;
    SessionEntry reply;
};

// Both entries of the flow, timestamps on this node's clock, admitted by
// `config_generation`, with no cached route (the receiver looks it up).
FlowEntries entries_of(const FlowRecord& record, uint64_t now_ns, uint32_t config_generation);

}  // namespace sluice::ha
