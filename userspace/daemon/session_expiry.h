// Which flows a GC walk removes, decided from one dump without touching any
// map (so it is testable): entries are paired into flows by the NAT-aware
// peer key (reverse_of), a flow's idle time and TCP state come from both of
// its entries, and an expired flow names the port reservation it releases.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "loader/session_table.h"

namespace sluice {

struct ExpiredFlow {
    const SessionEntry* entry = nullptr;  // the initiator, or the one entry left of the flow
    const SessionEntry* peer = nullptr;   // the other direction, when present
    // The nat_ports key to delete after the sessions.
    std::optional<nat_port_key> reservation;
    // Set for a reply entry left alone: the key is only a candidate, deleted
    // if the reservation there names this flow's inside host
    // (reservation_belongs_to).
    bool reservation_unconfirmed = false;
};

struct ExpiryPlan {
    std::vector<ExpiredFlow> expired;
    uint64_t next_due_ns = UINT64_MAX;   // earliest expiry among the flows kept
    size_t flows = 0;                    // flows seen (expired or not)
};

// Timeouts from cfg.timeout_ns (a 0 entry means 60 s). A flow last seen
// before idle_floor_ns counts as seen then (an HA takeover: synced flows carry
// the old node's last change, and the live ones must not expire at once).
ExpiryPlan plan_expiry(const std::vector<SessionEntry>& entries, const runtime_config& cfg, uint64_t now_ns,
                       uint64_t idle_floor_ns = 0);

}  // namespace sluice
