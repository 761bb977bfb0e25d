// profiles/history.csv: one row per perf-test run that measured throughput,
// so a change's effect can be read against the runs before it. Printed like
// the seed's "Historical Results" and drawn as an SVG line chart.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::perftest {

struct HistoryRow {
    std::string date;          // UTC, "2026-11-30 04:55"
    std::string environment;   // "netns", "loss-cluster", ...
    std::string revision;      // `git rev-parse --short HEAD`, or "unknown"
    std::string mode;          // "compare", "ipv4", "ipv6", "all"
    bool quick = false;
    int passes = 1;
    std::optional<double> ipv4_gbps;   // sluice medians
    std::optional<double> ipv6_gbps;
    std::optional<double> gap_percent;
    std::string baseline;              // "", "kernel", "nftables"
    std::optional<double> ipv4_ratio;  // sluice / baseline, median of per-pass ratios
    std::optional<double> ipv6_ratio;
};

// The header line, without a newline.
std::string history_header();
// One row in the file's format (comma-separated, empty for "not measured"),
// without a newline. Commas in text fields become ';'.
std::string format_history_row(const HistoryRow& row);
// Parses a whole file (header first); errors name the line.
Result<std::vector<HistoryRow>> parse_history(const std::string& text);

// Appends a row, writing the header first when the file is new or empty.
Status append_history(const std::string& path, const HistoryRow& row);
Result<std::vector<HistoryRow>> load_history(const std::string& path);

// The table `sluice perf-test history` prints (markdown).
std::string render_history(const std::vector<HistoryRow>& rows);

// A hand-written SVG line chart: IPv4 and IPv6 Gbit/s over runs (x: run in
// file order, labelled with date and revision), a line broken where a run did
// not measure that family.
std::string history_svg(const std::vector<HistoryRow>& rows, const std::string& title);

// Now, UTC, in the history's date format.
std::string history_now();

}  // namespace sluice::perftest
