// `sluice top`: a live view of an instance's counters (issue 21). Every
// interval it reads the pinned stats map and the session tables, as `show
// stats` does, and prints the counters that moved since the previous sample
// as rates (packets/s, and bits/s where the counter has bytes), the sessions
// per family with the table's fill, and the top drop reasons.
//
// The computation (two snapshots -> rates, sorted; the top drops) is
// compute_top_rates(), pure, so it is tested without maps
// (tests/unit/cli_top_test.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/session_table_fill.h"

extern "C" {
#include "stats.h"
}

namespace CLI {
class App;
}

namespace sluice::cli {

struct TopOptions {
    std::string instance = "default";
    double interval_s = 1.0;
    uint64_t count = 0;  // samples to print; 0: until SIGINT/SIGTERM
    bool json = false;
};

// Registers `top` and its options on app; the caller dispatches on the result.
CLI::App* add_top_command(CLI::App& app, TopOptions& options);

// Runs `sluice top`: 0 after --count samples or on SIGINT/SIGTERM, 1 when the
// instance has no pinned maps (never ran here, or `sluice down`) or a read
// fails. Text output clears the screen before each sample only when stdout
// is a terminal; otherwise samples follow one another.
int top(const TopOptions& options, std::ostream& out, std::ostream& err);

// One counter's rate over a sample.
struct TopRate {
    int reason = 0;                     // enum stat_reason
    std::string name;                   // "drop-policy-deny"
    std::string kind;                   // drop | pass | info
    uint64_t packets = 0;               // packets in the interval
    double packets_per_s = 0;
    std::optional<double> bytes_per_s;  // only for counters that count bytes (stat_counts_bytes)
    bool reset = false;                 // the counter went backwards (maps re-created): counted from 0
};

struct TopRates {
    std::vector<TopRate> rates;      // counters whose packets moved, by packets/s descending
    std::vector<TopRate> top_drops;  // the drop-kind ones among them, at most top_drops_max
    uint64_t drop_packets = 0;       // packets of every drop reason in the interval
};

// Rates from two snapshots of the stats map (indexed by stat_reason) taken
// elapsed_s apart (elapsed_s <= 0 is taken as 1 s). A counter lower in
// `after` than in `before` was reset (the instance was taken down and started
// again): its rate counts from 0, i.e. its whole `after` value. Ties are
// broken by bits/s, then by name, so the order is stable.
TopRates compute_top_rates(const std::vector<stat_counter>& before, const std::vector<stat_counter>& after,
                           double elapsed_s, size_t top_drops_max = 5);

// What a sample shows besides the rates.
struct TopSessions {
    uint64_t flows_v4 = 0, flows_v6 = 0;  // sessions (flows): entries that are not reply directions
    SessionTableFill fill;
};

// The sample as one JSON object: {"time", "interval_s", "sessions": {"ipv4",
// "ipv6", "table"}, "rates": [{"reason", "kind", "packets_per_s",
// "bytes_per_s"}], "top_drops": [... and "share" of the dropped packets]}.
// bytes_per_s is null for counters without bytes.
nlohmann::ordered_json top_sample_json(const std::string& time, double elapsed_s, const TopSessions& sessions,
                               const TopRates& rates);

// The sample as text: a header line (time, sessions per family, table fill),
// the moved counters, then "top drop reasons".
void print_top_sample(std::ostream& out, const std::string& instance, const std::string& time, double elapsed_s,
                      const TopSessions& sessions, const TopRates& rates);

// "1.23 Mbit/s" (SI prefixes, three significant digits).
std::string bits_per_s_text(double bytes_per_s);

}  // namespace sluice::cli
