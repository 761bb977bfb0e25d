// How full an instance's session table is: entries per family against the
// capacity the pinned maps were created with (limits.sessions), for `show
// sessions` and `show stats`. A full table drops new flows
// (drop-session-table-full), so the fill is what an operator watches.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/result.h"
#include "loader/session_table.h"

namespace sluice::cli {

struct SessionTableFill {
    uint64_t entries_v4 = 0, entries_v6 = 0;
    uint32_t capacity = 0;  // entries per family (two per flow)
};

// Counts `entries` per family; the capacity comes from the pinned maps.
Result<SessionTableFill> session_table_fill(const std::string& pin_dir, const std::vector<SessionEntry>& entries);

// {"sessions_per_family", "entries_per_family", "ipv4": {"entries", "fill"}, "ipv6": {...}}
nlohmann::json session_table_fill_json(const SessionTableFill& fill);

// "session table: IPv4 12 of 262144 entries (0.0%), IPv6 0 of 262144 entries
// (0.0%); 131072 sessions per family, two entries each"
std::string session_table_fill_text(const SessionTableFill& fill);

}  // namespace sluice::cli
