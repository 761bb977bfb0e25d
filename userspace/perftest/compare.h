// Throughput comparisons, measured in one run: IPv4 against IPv6 through
// sluice, and (with --baseline) sluice against plain kernel forwarding or an
// nftables ruleset, passes interleaved. Every number is a median with its
// min-max over passes; ratios are taken inside each pass (sluice and baseline
// measured minutes apart at most) and then summarised the same way.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "perftest/iperf_result.h"

namespace sluice::perftest {

enum class Family { ipv4, ipv6 };
const char* to_string(Family family);       // "ipv4" / "ipv6"
const char* display_name(Family family);    // "IPv4" / "IPv6"

// One iperf3 client run.
struct Measurement {
    Family family = Family::ipv4;
    std::string config;   // "sluice", "kernel" or "nftables"
    int pass = 0;         // 1-based
    int order = 0;        // position in the whole run, 1-based
    std::optional<IperfResult> result;
    std::string error;    // when result is empty
};

struct Spread {
    double median = 0;
    double min = 0;
    double max = 0;
    size_t count = 0;     // values summarised
};
// Median (mean of the middle two for an even count), min and max; count 0
// for no values.
Spread summarize(std::vector<double> values);

// What a compare run measured and how.
struct CompareRun {
    std::string environment;
    std::vector<Family> families;        // in the order measured
    std::string baseline;                // "" (none), "kernel" or "nftables"
    int passes = 1;
    int streams = 0;
    int seconds = 0;
    bool quick = false;
    cluster::GbpsRange expected_ipv4;
    cluster::GbpsRange expected_ipv6;
    std::vector<Measurement> measurements;
};

// One table row per family.
struct FamilySummary {
    Family family = Family::ipv4;
    Spread gbps;                 // sluice, receiver rate, Gbit/s
    Spread sender_gbps;          // sluice, sender rate
    Spread retransmits;          // sluice, per run
    int failed = 0;              // sluice runs that failed
    std::string first_error;
    cluster::GbpsRange expected;
    std::string versus_expected; // "within", "below", "above", "" (no expectation / no data)
    // With a baseline:
    Spread baseline_gbps;
    int baseline_failed = 0;
    Spread ratio;                // sluice / baseline per pass
};

struct CompareSummary {
    std::vector<FamilySummary> families;
    std::optional<double> gap_percent;           // (IPv4 - IPv6) / IPv4 of the medians
    std::optional<double> expected_gap_percent;  // the same from the expected ranges' middles
    bool all_ok = true;                          // every run succeeded
};

CompareSummary summarize(const CompareRun& run);

// "within" / "below" / "above" for a Gbit/s value against an expected range;
// "" when the range says nothing (N/A or no bounds).
std::string versus(const cluster::GbpsRange& expected, double gbps);

// "5.93 Gbps"
std::string format_gbps(double gbps);
// "5.93 Gbps (5.80-6.10)"; just the median for one value.
std::string format_spread_gbps(const Spread& spread);

// The Protocol | Throughput | Retransmits table with a Gap row, each set
// against the expected baseline, then (with a baseline) the sluice / baseline
// table. Markdown, so it pastes into an issue as is.
std::string render_compare(const CompareRun& run, const CompareSummary& summary);

// Everything above, plus every single measurement, as JSON.
nlohmann::json compare_to_json(const CompareRun& run, const CompareSummary& summary);

}  // namespace sluice::perftest
