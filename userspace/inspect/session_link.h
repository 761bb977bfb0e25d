// The stage's view of the datapath's sessions: which ruleset and NAT a
// punted connection has, and the verdict the stage writes back so the fast
// path enforces it on packets still in flight.
#pragma once

#include <optional>

#include "common/result.h"
#include "inspect/sockets.h"
#include "loader/session_table.h"

namespace sluice::inspect {

// Where the server-side leg binds and connects: the flow's tuple as it
// leaves the firewall, with the session's NAT applied (punted packets are
// never translated by XDP; the legs' addresses carry the translation).
struct ServerLeg {
    Endpoint local;
    Endpoint remote;
};

class SessionLink {
public:
    SessionLink(int fd_v4, int fd_v6) : fd_v4_(fd_v4), fd_v6_(fd_v6) {}

    // The entry of packets travelling src → dst.
    std::optional<SessionEntry> find(uint8_t protocol, const Endpoint& src, const Endpoint& dst) const;
    // Writes the verdict (enum session_verdict) into both directions' entries.
    Status set_verdict(const SessionEntry& initiator, uint8_t verdict) const;
    // That direction's packets return to the fast path (its punt flag cleared).
    Status release_direction(const SessionEntry& entry) const;

    // A TCP hand-off (tcp_handoff.h). hold: XDP keeps new data away from the
    // stage's sockets (SESSION_PUNT_HOLD) on both entries, or lets it through.
    Status set_hold(const SessionEntry& initiator, bool hold) const;
    // Both entries as they are now (the newest TSvals); none when expired.
    struct FlowEntries {
        SessionEntry initiator, reply;
    };
    std::optional<FlowEntries> entries(const SessionEntry& initiator) const;
    // The flow leaves the stage: both entries forwarded by XDP with the splice.
    Status splice(FlowEntries flow, const session_splice& client_to_server, const session_splice& server_to_client) const;

private:
    int fd_v4_;
    int fd_v6_;
};

ServerLeg server_leg(const SessionEntry& initiator);

// A session tuple's address and port (family SLUICE_FAMILY_*) as an Endpoint.
Endpoint endpoint_of(uint8_t family, const uint32_t addr[4], uint16_t port);

}  // namespace sluice::inspect
