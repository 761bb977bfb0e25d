// What /metrics exports (docs/operations.md "Metrics"): the datapath's
// counters read from the pinned maps at each scrape, named by the config in
// force, plus what only the daemon knows (flow log, HA, reloads). Scrapes
// run on the metrics server's thread: the daemon hands it an immutable
// snapshot of names and its own counters (publish), the maps are read
// directly. Labels are bounded by the config (policies, filter rules, zones,
// services, rulesets, patterns): no address or name from traffic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/compiled_config.h"
#include "daemon/flow_logger.h"
#include "loader/instance_paths.h"
#include "observe/prometheus_text.h"

namespace sluice {

class Datapath;

// The names of the config in force and the daemon's own counters.
struct MetricsSnapshot {
    std::vector<CompiledZone> zones;
    std::vector<CompiledPolicy> policies;
    std::vector<CompiledFilter> filters;
    std::vector<CompiledHostService> host_services;
    std::vector<CompiledHostZone> host_zones;
    std::map<uint16_t, std::string> rulesets;   // by id
    uint8_t generation = 0;                     // the policy generation these belong to
    policy_action default_action = POLICY_ACTION_DENY;
    FlowLogCounters flow_log;
    nlohmann::json ha;                          // the HA agent's status, null without a pair
    nlohmann::json egress;                      // the DNS proxy's counters, null without egress
    uint64_t reloads = 0, reload_failures = 0;
};

class MetricsCollector {
public:
    MetricsCollector(const Datapath& datapath, InstancePaths paths);

    void publish(std::shared_ptr<const MetricsSnapshot> snapshot);
    // The families of one scrape.
    std::vector<observe::MetricFamily> collect() const;
    std::string render() const { return observe::render_prometheus(collect()); }

private:
    const Datapath& dp_;
    InstancePaths paths_;
    mutable std::mutex mutex_;
    std::shared_ptr<const MetricsSnapshot> snapshot_;
};

}  // namespace sluice
