// One flow-log line: a flow event (maps/observe.h) as a JSON object on one
// line, with names for the ids it carries. The datapath's events (open,
// deny, a close it made) and the session GC's closes all become a
// flow_event first, so every line is written by this one function.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "loader/session_table.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::observe {

// The names a config generation gives to ids.
struct FlowNames {
    std::vector<std::string> policies;          // by policy id
    std::vector<std::string> zones;             // by zone id; [0] unused
    // if_indextoname, or the number; remembered for the generation's life
    // (a socket and an ioctl per line would cost more than the line): a
    // renamed interface shows its new name from the next config on.
    std::string interface_of(uint32_t ifindex) const;

private:
    mutable std::unordered_map<uint32_t, std::string> interfaces_;
};

// Why a flow ended, from its TCP state (or idle for other protocols).
std::string close_reason(const flow_event& e);

// The close event of a flow the GC removed: entry is its initiator (or the
// one entry left), peer the other direction, if any. The event's time is the
// flow's last packet (time_ns, when it was removed, if the entries have none).
flow_event close_event_of(const SessionEntry& entry, const SessionEntry* peer, uint64_t time_ns);

// The JSON line (no newline). `when` is the event's wall-clock time.
std::string flow_record_json(const flow_event& e, const FlowNames& names, std::chrono::system_clock::time_point when);

// "flow-open", "flow-deny", "flow-close": the syslog MSGID.
const char* flow_event_msg_id(const flow_event& e);

}  // namespace sluice::observe
