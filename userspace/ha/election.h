// Which node carries a redundancy group (docs/ha.md "Roles"): a pure
// decision over what this node knows, so every rule can be tested without
// sockets or clocks. The agent calls it after every heartbeat and timer.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::ha {

enum class Role : uint8_t { init, standby, active };
std::string to_string(Role role);

struct PeerView {
    bool alive = false;        // a heartbeat within hold-time, on any path
    uint8_t priority = 0;      // its effective priority for the group
    bool active = false;
    bool releasing = false;    // it is handing the group over (ha failover)
    uint8_t node_id = 0;
};

struct GroupInput {
    Role current = Role::init;
    uint8_t priority = 0;      // this node's effective priority (0: a monitored link is down)
    uint8_t node_id = 0;
    bool preempt = false;
    bool releasing = false;    // this node was told to hand the group over
    bool synced = false;       // the peer's bulk sync has arrived (or there is no peer)
    bool waited = false;       // hold-time has passed since this node started
    PeerView peer;
};

struct Decision {
    Role role = Role::init;
    std::string why;           // for the log and `ha status`
};

Decision decide(const GroupInput& in);

}  // namespace sluice::ha
