// The inspection stage inside `sluice run`: one worker thread per core, the
// policy route for punted packets, the counters file, and punt_cfg, through
// which the fast path learns whether the stage is up (and where it listens).
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "inspect/stage_context.h"
#include "inspect/worker.h"
#include "loader/punt_routing.h"

namespace sluice::inspect {

struct StageOptions {
    int sessions_v4_fd = -1;
    int sessions_v6_fd = -1;
    int punt_cfg_fd = -1;
    std::string counters_path;
    unsigned workers = 0;                       // 0: one per core
    uint64_t udp_idle_ns = 60'000'000'000ull;
    // Above this many open flows new punted flows get their ruleset's
    // fail-mode (the fast path is told); below 90% of it they are punted again.
    int64_t max_flows = 50'000;
    PuntRouting routing;
};

class Stage {
public:
    // Checks the CPU, opens the listeners and the route, starts the workers,
    // then tells the fast path the stage is up.
    static Result<std::unique_ptr<Stage>> start(const StageOptions& options,
                                                std::shared_ptr<const CompiledRulesets> rulesets);
    ~Stage();

    // New flows use these from now on; open ones finish on theirs.
    void update_rulesets(std::shared_ptr<const CompiledRulesets> rulesets);
    // The fast path is told first (punted flows get their fail-mode), then
    // the workers stop and every proxied connection is closed.
    void stop();

    // Called periodically: raises or clears the overload flag in punt_cfg.
    void check_load();
    bool overloaded() const { return overloaded_; }
    int64_t open_flows() const { return context_.open_flows.load(std::memory_order_relaxed); }

    StagePorts ports() const { return ports_; }
    size_t worker_count() const { return workers_.size(); }

private:
    explicit Stage(const StageOptions& options);
    Status write_punt_config(bool up) const;
    bool overloaded_ = false;

    StageOptions options_;
    std::unique_ptr<CounterTable> counters_;
    StageContext context_;
    StagePorts ports_;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::vector<std::thread> threads_;
    std::shared_ptr<PuntRoutingLease> routing_;
};

}  // namespace sluice::inspect
