// The policy route that delivers punted packets locally. tc_punt_prog marks
// a packet it assigned to an inspection-stage socket; a rule sends marked
// packets to a table whose only route is `local default dev lo`, so the
// kernel delivers them (to the assigned socket) instead of forwarding them.
// One rule and one route per family, in the daemon's network namespace.
#pragma once

#include <cstdint>
#include <memory>

#include "common/result.h"

namespace sluice {

struct PuntRouting {
    uint32_t mark = 0x5e1c0001;  // skb->mark tc_punt_prog sets
    uint32_t table = 24092;      // 0x5e1c
    uint32_t priority = 1000;    // after the local table (0), before main (32766)
};

// Installs (or keeps) the rule and route for both families.
Status install_punt_routing(const PuntRouting& routing);
// Removes them; missing ones are not an error.
Status remove_punt_routing(const PuntRouting& routing);

// The inspection stage and the egress DNS proxy both need the route: each
// holds a lease; the first lease installs it, the last one's end removes it.
class PuntRoutingLease {
public:
    static Result<std::shared_ptr<PuntRoutingLease>> acquire(const PuntRouting& routing);
    ~PuntRoutingLease();
    PuntRoutingLease(const PuntRoutingLease&) = delete;
    PuntRoutingLease& operator=(const PuntRoutingLease&) = delete;
    const PuntRouting& routing() const { return routing_; }

private:
    explicit PuntRoutingLease(const PuntRouting& routing) : routing_(routing) {}
    PuntRouting routing_;
};

}  // namespace sluice
