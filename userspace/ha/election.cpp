#include "ha/election.h"

namespace sluice::ha {
namespace {

// Higher priority wins; equal priorities go to the lower node id, so the
// two nodes always agree on one winner.
bool wins_over_peer(const GroupInput& in) {
    if (in.priority != in.peer.priority) return in.priority > in.peer.priority;
    return in.node_id < in.peer.node_id;
}

std::string prio_text(const GroupInput& in) {
    return "priority " + std::to_string(in.priority) + " against the peer's " + std::to_string(in.peer.priority);
}

}  // namespace

std::string to_string(Role role) {
    switch (role) {
    case Role::init: return "init";
    case Role::standby: return "standby";
    case Role::active: return "active";
    }
    return "unknown";
}

Decision decide(const GroupInput& in) {
    const PeerView& peer = in.peer;
    if (!peer.alive) {
        if (in.current == Role::init && !in.waited) return {Role::init, "waiting one hold-time for the peer"};
        if (in.priority == 0) return {Role::standby, "a monitored interface is down and the peer is silent"};
        return {Role::active, in.current == Role::active ? "the peer is silent" : "the peer is silent: taking over"};
    }
    if (in.releasing) {
        if (peer.active) return {Role::standby, "handed over by ha failover; the peer carries the group"};
        if (in.current == Role::active) return {Role::active, "handing over (ha failover): waiting for the peer"};
        return {Role::standby, "handed over by ha failover"};
    }
    if (peer.releasing && peer.active && in.priority > 0)
        return {Role::active, "the peer hands the group over (ha failover)"};
    if (in.priority == 0 && peer.priority > 0) return {Role::standby, "a monitored interface is down"};
    if (peer.priority == 0 && in.priority > 0) return {Role::active, "the peer's monitored interface is down"};
    if (in.current == Role::active && peer.active) {
        if (wins_over_peer(in)) return {Role::active, "both nodes were active: " + prio_text(in) + " wins"};
        return {Role::standby, "both nodes were active: " + prio_text(in) + " yields"};
    }
    if (in.current == Role::active) return {Role::active, "carrying the group; the peer is standby"};
    if (peer.active) {
        if (in.preempt && in.synced && in.priority > peer.priority)
            return {Role::active, "preempts: " + prio_text(in)};
        if (in.preempt && !in.synced && in.priority > peer.priority)
            return {Role::standby, "will preempt once the peer's sessions have arrived"};
        return {Role::standby, "the peer carries the group"};
    }
    if (wins_over_peer(in)) return {Role::active, "neither node was active: " + prio_text(in) + " wins"};
    return {Role::standby, "neither node was active: " + prio_text(in) + " yields"};
}

}  // namespace sluice::ha
