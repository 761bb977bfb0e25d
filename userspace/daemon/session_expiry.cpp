#include "daemon/session_expiry.h"

#include <algorithm>
#include <unordered_map>

#include "loader/nat_reservations.h"

namespace sluice {

ExpiryPlan plan_expiry(const std::vector<SessionEntry>& entries, const runtime_config& cfg, uint64_t now,
                       uint64_t idle_floor_ns) {
    std::unordered_map<SessionKeyBytes, size_t, SessionKeyHash> index;
    index.reserve(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) index.emplace(key_bytes(entries[i]), i);

    ExpiryPlan plan;
    for (const SessionEntry& e : entries) {
        const SessionEntry* peer = nullptr;
        if (auto it = index.find(key_bytes(reverse_of(e))); it != index.end()) peer = &entries[it->second];
        // Each flow is judged once, from its initiator entry (or alone if orphaned).
        if ((e.value.flags & SESSION_F_REPLY) && peer) continue;
        ++plan.flows;

        uint64_t last = e.value.last_seen_ns;
        if (peer) last = std::max<uint64_t>(last, peer->value.last_seen_ns);
        last = std::max(last, idle_floor_ns);
        // TCP state transitions are written to both entries; take the further one
        // in case a write to the peer was missed.
        session_value probe = e.value;
        probe.tcp_state = std::max<uint8_t>(e.value.tcp_state, peer ? peer->value.tcp_state : uint8_t{0});
        uint64_t timeout = cfg.timeout_ns[timeout_class_of(probe, e.protocol)];
        if (timeout == 0) timeout = 60ull * 1000000000ull;
        if (now < last || now - last < timeout) {
            plan.next_due_ns = std::min(plan.next_due_ns, last + timeout);
            continue;
        }
        ExpiredFlow f;
        f.entry = &e;
        f.peer = peer;
        if (auto k = held_reservation(e)) {
            f.reservation = k;
        } else if (!peer) {
            f.reservation = orphan_reply_reservation(e);
            f.reservation_unconfirmed = f.reservation.has_value();
        }
        plan.expired.push_back(f);
    }
    return plan;
}

}  // namespace sluice
