// A benchmark's results as JSON lines, one object per measurement (or per
// event such as a reload), written as they are taken so a run that fails
// half-way keeps what it measured; the report is rendered from these records
// alone (`sluice bench report FILE.jsonl` re-renders one).
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::bench {

class ResultLog {
public:
    // Writes `path` anew from the first record on ("" keeps the records in
    // memory only): a run that fails before it measured anything leaves an
    // earlier run's file as it was. Fails now when `path` cannot be written.
    static Result<ResultLog> open(const std::string& path, const std::string& bench);
    ResultLog() = default;

    // Adds "bench" and writes the line at once.
    void add(nlohmann::json record);
    const std::vector<nlohmann::json>& records() const { return records_; }
    const std::string& path() const { return path_; }

    // The records of a JSON-lines file.
    static Result<std::vector<nlohmann::json>> read(const std::string& path);

private:
    std::string path_, bench_;
    std::vector<nlohmann::json> records_;
};

// Records whose fields equal every (key, value) in `match`.
std::vector<nlohmann::json> select(const std::vector<nlohmann::json>& records, const nlohmann::json& match);
// record[field] by pass, for the selected records (numbers only).
std::map<int, double> by_pass(const std::vector<nlohmann::json>& records, const nlohmann::json& match,
                              const std::string& field);
std::vector<double> values(const std::map<int, double>& per_pass);

struct Spread {
    double median = 0, min = 0, max = 0;
    size_t n = 0;
};
std::optional<Spread> spread_of(std::vector<double> values);
// A distribution-free 95 % confidence interval of the median: the order
// statistics whose ranks the binomial(n, 1/2) bounds (normal approximation,
// ranks n/2 -/+ 0.98 sqrt(n)); nullopt under 10 values, where it would be
// no narrower than the range.
struct MedianInterval {
    double low = 0, high = 0;
};
std::optional<MedianInterval> median_ci95(std::vector<double> values);
// "1.23 (1.01–1.40)", or "-" for no values.
std::string format_spread(const std::optional<Spread>& s, int decimals);
std::string format_spread(const std::vector<double>& values, int decimals);
// a[p] / b[p] for every pass both have (b[p] > 0): ratios within one pass.
std::vector<double> per_pass_ratios(const std::map<int, double>& a, const std::map<int, double>& b);

}  // namespace sluice::bench
