// The name and kind (drop | pass | info) of every stat_reason, from the
// X-macro in maps/stats.h: what `show stats`, the metrics and flow logs call
// a counter.
#pragma once

#include <string_view>

extern "C" {
#include "stats.h"
}

namespace sluice {

struct StatInfo {
    std::string_view name;   // "drop-policy-deny"
    std::string_view kind;   // "drop", "pass" or "info"
};

// reason out of range: {"unknown", "info"}.
StatInfo stat_info(int reason);

// Bytes are counted where a packet's fate is decided: the drop and pass
// reasons, and forward (maps/stats.h).
bool stat_counts_bytes(int reason);

}  // namespace sluice
