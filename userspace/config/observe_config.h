// Observability settings (docs/operations.md): the Prometheus endpoint and
// the flow log's destination and rate limit. Which events are logged is
// said per policy (`log:`) and for the default action (`default-log:`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/diagnostics.h"
#include "config/endpoint.h"

namespace sluice::config {

// `metrics: { listen: ADDR:PORT }`: /metrics in the Prometheus text format.
struct MetricsConfig {
    std::optional<Endpoint> listen;   // empty: no endpoint
    bool written = false;             // the section is there (valid or not)
};

enum class FlowLogOutputKind { file, syslog, stdout_stream };

inline constexpr const char* kDefaultFlowLogPath = "/var/log/sluice/flows.jsonl";

// `flow-log:`: where flow events go. Without the section, a config whose
// policies log writes to kDefaultFlowLogPath.
struct FlowLogConfig {
    std::optional<Location> location;           // of the section; empty: defaults
    FlowLogOutputKind output = FlowLogOutputKind::file;
    std::string path = kDefaultFlowLogPath;      // output: file
    uint64_t max_bytes = 100ull << 20;           // rotate at this size
    unsigned keep = 5;                           // rotated files kept
    std::string syslog_socket = "/dev/log";      // output: syslog, a local socket
    std::optional<Endpoint> syslog_server;       // ... or a UDP server (wins)
    int facility = 16;                           // local0
    // Events per second over all CPUs (0: no limit) and how many may come
    // at once above that rate; events over it are counted, not written.
    uint32_t rate_limit = 10000;
    uint32_t burst = 1000;
};

}  // namespace sluice::config
