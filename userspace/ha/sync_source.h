// The sending side of session sync (docs/ha.md "Session sync"): which
// flows changed (the datapath's ha_events, deduplicated), read from the maps
// as they are now and turned into the records and deletes the peer needs;
// and every movable flow, for a bulk sync. Messages are packed to stay
// under one fabric datagram each.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "ha/session_maps.h"
#include "ha/sync_protocol.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::ha {

struct Changes {
    std::vector<FlowRecord> flows;     // created or changed, as they are now
    std::vector<FlowKey> deletes;      // gone since their event
    uint64_t unmovable = 0;            // inspected, spliced or SYN-proxied: stay on this node
};

// The keys of the changed flows, each once, from ha_events records.
class ChangedKeys {
public:
    void add(const ha_event& e);
    bool empty() const { return keys_.empty(); }
    size_t size() const { return keys_.size(); }
    std::vector<FlowKey> take();

private:
    std::set<std::vector<uint8_t>> seen_;
    std::vector<FlowKey> keys_;
};

// Reads each key's flow now. A key whose entry is gone becomes a delete (of
// the initiator tuple it was given; the peer finds the flow by either).
Changes read_changes(const SessionMaps& maps, const std::vector<FlowKey>& keys, uint64_t now_ns);

// Every flow of the table, for a bulk sync.
Result<Changes> read_all(const SessionMaps& maps, uint64_t now_ns);

// Messages of at most kFlowsPerDatagram / kDeletesPerDatagram records.
std::vector<Message> pack(const Changes& changes);

}  // namespace sluice::ha
