#include "bench/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace sluice::bench {

Result<ResultLog> ResultLog::open(const std::string& path, const std::string& bench) {
    ResultLog log;
    log.path_ = path;
    log.bench_ = bench;
    if (!path.empty()) {
        std::error_code ec;
        const bool existed = std::filesystem::exists(path, ec);
        {
            std::ofstream out(path, std::ios::app);  // writable? (nothing truncated yet)
            if (!out) return make_error("cannot write the results file " + path);
        }
        // The check made it: a run that measures nothing leaves no file.
        if (!existed) std::filesystem::remove(path, ec);
    }
    return log;
}

void ResultLog::add(nlohmann::json record) {
    record["bench"] = bench_;
    if (!path_.empty()) {
        std::ofstream out(path_, records_.empty() ? std::ios::trunc : std::ios::app);
        out << record.dump() << "\n";
    }
    records_.push_back(std::move(record));
}

Result<std::vector<nlohmann::json>> ResultLog::read(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error("cannot read " + path);
    std::vector<nlohmann::json> out;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return make_error(path + ":" + std::to_string(n) + ": not a JSON object");
        out.push_back(std::move(j));
    }
    return out;
}

std::vector<nlohmann::json> select(const std::vector<nlohmann::json>& records, const nlohmann::json& match) {
    std::vector<nlohmann::json> out;
    for (const auto& r : records) {
        bool all = true;
        for (const auto& [k, v] : match.items())
            if (!r.contains(k) || r[k] != v) {
                all = false;
                break;
            }
        if (all) out.push_back(r);
    }
    return out;
}

std::map<int, double> by_pass(const std::vector<nlohmann::json>& records, const nlohmann::json& match,
                              const std::string& field) {
    std::map<int, double> out;
    for (const auto& r : select(records, match))
        if (r.contains(field) && r[field].is_number() && r.contains("pass"))
            out[r["pass"].get<int>()] = r[field].get<double>();
    return out;
}

std::vector<double> values(const std::map<int, double>& per_pass) {
    std::vector<double> v;
    for (const auto& [p, x] : per_pass) v.push_back(x);
    return v;
}

std::optional<Spread> spread_of(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    Spread s;
    s.n = v.size();
    s.min = v.front();
    s.max = v.back();
    s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return s;
}

std::optional<MedianInterval> median_ci95(std::vector<double> v) {
    if (v.size() < 10) return std::nullopt;
    std::sort(v.begin(), v.end());
    const double n = static_cast<double>(v.size());
    const double half = 0.98 * std::sqrt(n);
    // 1-based ranks: floor(n/2 - half) and ceil(n/2 + 1 + half), within 1..n.
    const auto low = static_cast<size_t>(std::max(1.0, std::floor(n / 2 - half)));
    const auto high = static_cast<size_t>(std::min(n, std::ceil(n / 2 + 1 + half)));
    return MedianInterval{v[low - 1], v[high - 1]};
}

std::string format_spread(const std::optional<Spread>& s, int decimals) {
    if (!s) return "-";
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.*f (%.*f–%.*f)", decimals, s->median, decimals, s->min, decimals, s->max);
    return buf;
}

std::string format_spread(const std::vector<double>& v, int decimals) {
    return format_spread(spread_of(v), decimals);
}

std::vector<double> per_pass_ratios(const std::map<int, double>& a, const std::map<int, double>& b) {
    std::vector<double> out;
    for (const auto& [pass, denominator] : b) {
        auto it = a.find(pass);
        if (it != a.end() && denominator > 0) out.push_back(it->second / denominator);
    }
    return out;
}

}  // namespace sluice::bench
