// The daemon's observability (docs/operations.md): the /metrics endpoint,
// the flow log, and the snapshot of names and daemon counters the scrapes
// read. Like the rest of a config, both are prepared before the datapath
// flips (a listener that cannot bind or a log that cannot open refuses the
// config, nothing changed) and adopted after it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "compiler/compiled_config.h"
#include "config/config.h"
#include "daemon/flow_logger.h"
#include "daemon/metrics_collector.h"
#include "loader/instance_paths.h"
#include "observe/metrics_server.h"

namespace sluice {

class Datapath;

class ObservabilityHost {
public:
    ObservabilityHost(const Datapath& datapath, const InstancePaths& paths);

    Status prepare(const config::Config& parsed);
    void abandon();   // the config was refused after prepare()
    void adopt(const config::Config& parsed, const CompiledConfig& compiled);

    FlowLogger& flow_log() { return flow_log_; }
    // The daemon's own counters for the next scrapes (called from its loop).
    void refresh(nlohmann::json ha, nlohmann::json egress, uint64_t reloads, uint64_t reload_failures);
    // A `sluice capture` that died without turning capture off: off.
    void check_capture();
    // One exposition now (the control socket's `metrics`).
    std::string metrics_text() const { return collector_.render(); }
    // Text and JSON of one and the same scrape.
    std::pair<std::string, nlohmann::json> metrics_both() const;
    // "198.18.0.1:9100", or "" without an endpoint.
    std::string metrics_listen() const;

private:
    void publish();

    const Datapath& dp_;
    MetricsCollector collector_;
    FlowLogger flow_log_;
    std::unique_ptr<observe::MetricsServer> server_, prepared_server_;
    std::optional<std::pair<std::string, uint16_t>> prepared_listen_;
    bool server_prepared_ = false;
    MetricsSnapshot names_;   // of the config in force and the daemon's last counters
};

}  // namespace sluice
