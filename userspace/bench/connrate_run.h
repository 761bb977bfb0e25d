// Short-connection rate through the lab (tests/sluice_connrate: connect, one
// request, one response, close), its servers started in the lab and its
// client's JSON read here. Runs continue the client tuples where the last
// one stopped (the offset), so one run's sessions never meet the next's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/lab.h"
#include "common/result.h"

namespace sluice::bench {

struct ConnrateServer {
    std::string node = "wan";
    std::vector<std::string> addresses;  // --address, each
    std::string ports = "5301-5316";
    int threads = 2;
    int cpu = -1;
};

// Starts the server and waits (5 s) for its "listening" line.
Result<cluster::BackgroundProcess> start_connrate_server(Lab& lab, const std::string& tool,
                                                         const ConnrateServer& spec, const std::string& log_name);

struct ConnrateClient {
    std::string node = "lan";
    std::string address;               // the server
    std::string ports = "5301-5316";
    std::vector<std::string> sources;  // --source, each
    double duration = 3;
    double warmup = 0.5;
    int threads = 2;
    int concurrency = 32;
    int timeout_ms = 0;                // 0 = the tool's default
    int cpu = -1;
};

struct ConnrateOutcome {
    double per_second = 0;
    uint64_t completed = 0;
    uint64_t failures = 0;                      // every kind together
    std::map<std::string, uint64_t> failures_by_kind;
    uint64_t p50_us = 0, p90_us = 0, p99_us = 0;
    uint64_t next_offset = 0;
    std::string json;                           // the client's own output
};

// Parses the client's JSON line.
Result<ConnrateOutcome> parse_connrate(const std::string& text);

// One client run from `offset`; *offset becomes the client's next_offset.
Result<ConnrateOutcome> run_connrate(Lab& lab, const std::string& tool, const ConnrateClient& spec,
                                     uint64_t* offset);

}  // namespace sluice::bench
