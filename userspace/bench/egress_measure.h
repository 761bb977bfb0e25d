// The pure parts of `sluice bench egress` (docs/benchmarks.md, "Egress by
// name"): one curl's `-w '%{json}'` line read into a sample, percentiles,
// and a batch of concurrent requests summed up into the numbers the report
// shows (Req/s, avg, P50, P99 of time_total; DNS lookup avg and P99).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::bench {

// One request as curl reported it (seconds, as curl writes them).
struct CurlSample {
    int exit_code = -1;         // curl's exit code (0 = success)
    int http_code = 0;          // response_code / http_code
    double total = 0;           // time_total
    double namelookup = 0;      // time_namelookup
    uint64_t size_download = 0;  // bytes of body received
    std::string url, error;     // url_effective, errormsg
    // A request succeeded: curl exited 0 with HTTP 200.
    bool ok() const { return exit_code == 0 && http_code == 200; }
};

// The JSON object curl prints for `-w '%{json}'` (the last non-empty line
// of `text`). An Error when it is not such an object.
Result<CurlSample> parse_curl_json(const std::string& text);

// The p-th percentile (0 < p <= 100) by nearest rank: the smallest value
// with at least p % of the values at or below it. nullopt for no values.
std::optional<double> percentile(std::vector<double> values, double p);
double mean(const std::vector<double>& values);  // 0 for none

// A batch of requests run at once.
struct BatchSummary {
    size_t requests = 0, failed = 0;
    double wall_seconds = 0;
    double requests_per_second = 0;  // requests / wall
    double avg_ms = 0, p50_ms = 0, p99_ms = 0;          // time_total
    double dns_avg_ms = 0, dns_p99_ms = 0;              // time_namelookup
    uint64_t bytes = 0;                                 // size_download, summed
    double mib_per_second = 0;                          // bytes / wall
    std::string first_failure;                          // "URL: exit 7 (...), HTTP 0"
};
// Latencies over every sample, failed ones included (they are in the batch's
// time); `failed` counts those that are not ok().
BatchSummary summarize(const std::vector<CurlSample>& samples, double wall_seconds);

// "-3 %", "+14 %", "0 %": value against base, rounded to a whole percent
// ("-" when base is 0).
std::string percent_change(double value, double base);

}  // namespace sluice::bench
