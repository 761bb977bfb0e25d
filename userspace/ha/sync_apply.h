// The receiving side of session sync (docs/ha.md "Session sync"): a decoded
// flow record or delete written into this node's maps. Records were already
// checked field by field by decode(); here they are checked against this
// node's config (zones) before anything is written, and a flow's two
// entries and its NAT port reservation are written together.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "ha/session_maps.h"
#include "ha/sync_protocol.h"

namespace sluice::ha {

struct ApplyCounters {
    uint64_t flows_written = 0;
    uint64_t flows_refused = 0;     // a record this node's config cannot hold (logged)
    uint64_t flows_replaced = 0;    // an older flow on the same tuple went first
    uint64_t deletes_done = 0;
    uint64_t deletes_unknown = 0;   // no such flow here (already expired, or never synced)
};

class SyncApplier {
public:
    // `zone_count`: zones of this node's config (ids 1..zone_count).
    SyncApplier(SessionMaps maps, uint16_t zone_count) : maps_(maps), zone_count_(zone_count) {}

    // Writes the flow's entries (and its NAT port when it holds one),
    // timestamps on this node's clock, admitted by `config_generation`.
    Status apply(const FlowRecord& record, uint64_t now_ns, uint32_t config_generation);
    // Removes the flow whose initiator tuple is `key`, both entries and its port.
    Status remove(const FlowKey& key);

    const ApplyCounters& counters() const { return counters_; }

private:
    Status remove_existing(const FlowKey& key, bool* existed);

    SessionMaps maps_;
    uint16_t zone_count_;
    ApplyCounters counters_;
};

}  // namespace sluice::ha
