// The inspection stage as the daemon hosts it: runs it while the config has
// inspect rulesets (and the operator has not stopped it), hands it each new
// generation of compiled rulesets, and keeps every ruleset's id stable across
// reloads (open sessions carry the id; fail-mode and counters follow it).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "daemon/published_state.h"
#include "inspect/ruleset_db.h"
#include "inspect/stage.h"
#include "loader/datapath.h"
#include "loader/instance_paths.h"

namespace sluice {

class InspectionHost {
public:
    InspectionHost(const Datapath& dp, InstancePaths paths) : dp_(dp), paths_(std::move(paths)) {}

    // Ids for `c`'s rulesets: a name keeps the id it had; a new name gets an
    // id not used since start while there is one.
    Result<std::map<std::string, uint16_t>> stable_ruleset_ids(const config::Config& c) const;

    // The applied config's rulesets: starts, updates or stops the stage.
    Status adopt(const config::Config& applied, std::shared_ptr<const inspect::CompiledRulesets> rulesets);

    // The egress rules changed at run time: the SNI checks decide with these.
    void update_egress_policy(std::shared_ptr<const config::Egress> policy);

    // `sluice inspect stop|start`: held, the stage stays down until released.
    Status hold(bool held);

    bool has_rulesets() const { return !ruleset_configs_.empty(); }
    bool running() const { return stage_ != nullptr; }
    // Lets the stage shed load (called once per daemon loop).
    void check_load();
    void stop() { stage_.reset(); }

    // The "inspect" part of the published state.
    state::Inspect published() const;

private:
    Status sync();

    const Datapath& dp_;
    InstancePaths paths_;
    std::unique_ptr<inspect::Stage> stage_;
    std::shared_ptr<const inspect::CompiledRulesets> rulesets_;
    std::vector<config::Ruleset> ruleset_configs_;
    std::map<std::string, uint16_t> ruleset_ids_;
    uint16_t next_ruleset_id_ = 1;
    std::chrono::nanoseconds udp_idle_{0};
    bool held_ = false;
    uint64_t changes_ = 0;  // answered stop/start requests
};

}  // namespace sluice
