// What every worker of the inspection stage shares: the session maps, the
// active rulesets (swapped atomically on reload) and the counters.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "inspect/counter_table.h"
#include "inspect/ruleset_db.h"
#include "inspect/session_link.h"

namespace sluice::inspect {

struct StageContext {
    SessionLink sessions;
    // New connections take the rulesets current when they open; open ones
    // keep theirs (their streams hold the databases).
    std::atomic<std::shared_ptr<const CompiledRulesets>> rulesets;
    CounterTable* counters = nullptr;
    uint64_t udp_idle_ns = 60'000'000'000ull;  // a UDP flow's sockets close after this long idle
    std::atomic<int64_t> open_flows{0};        // TCP relays + UDP flows, all workers

    std::shared_ptr<const CompiledRuleset> ruleset(uint16_t id) const {
        auto all = rulesets.load();
        return all ? all->find(id) : nullptr;
    }
};

}  // namespace sluice::inspect
