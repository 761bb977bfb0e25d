#include "cli/session_table_fill.h"

#include <cstdio>

#include "loader/session_maps_size.h"

namespace sluice::cli {
namespace {

double fill_ratio(uint64_t entries, uint32_t capacity) {
    return capacity == 0 ? 0.0 : static_cast<double>(entries) / capacity;
}

std::string family_text(const char* family, uint64_t entries, uint32_t capacity) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * fill_ratio(entries, capacity));
    return std::string(family) + " " + std::to_string(entries) + " of " + std::to_string(capacity) + " entries (" +
           pct + ")";
}

}  // namespace

Result<SessionTableFill> session_table_fill(const std::string& pin_dir, const std::vector<SessionEntry>& entries) {
    auto sessions = pinned_session_capacity(pin_dir);
    if (!sessions) return sessions.error();
    SessionTableFill fill;
    fill.capacity = sessions.value() * 2;
    for (const SessionEntry& e : entries) (e.family == SLUICE_FAMILY_IPV4 ? fill.entries_v4 : fill.entries_v6) += 1;
    return fill;
}

nlohmann::json session_table_fill_json(const SessionTableFill& fill) {
    return {{"sessions_per_family", fill.capacity / 2},
            {"entries_per_family", fill.capacity},
            {"ipv4", {{"entries", fill.entries_v4}, {"fill", fill_ratio(fill.entries_v4, fill.capacity)}}},
            {"ipv6", {{"entries", fill.entries_v6}, {"fill", fill_ratio(fill.entries_v6, fill.capacity)}}}};
}

std::string session_table_fill_text(const SessionTableFill& fill) {
    return "session table: " + family_text("IPv4", fill.entries_v4, fill.capacity) + ", " +
           family_text("IPv6", fill.entries_v6, fill.capacity) + "; " + std::to_string(fill.capacity / 2) +
           " sessions per family, two entries each";
}

}  // namespace sluice::cli
