#include "bench/egress_measure.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace sluice::bench {
namespace {

double number(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return 0;
    return it->get<double>();
}

}  // namespace

Result<CurlSample> parse_curl_json(const std::string& text) {
    // The last non-empty line: curl writes the object on one line.
    size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return make_error("curl printed nothing");
    size_t begin = text.rfind('\n', end);
    begin = begin == std::string::npos ? 0 : begin + 1;
    const std::string line = text.substr(begin, end - begin + 1);
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("not curl's -w %{json} object: " + line.substr(0, 200));
    if (!j.contains("time_total") || !j.contains("time_namelookup"))
        return make_error("curl's JSON has no time_total/time_namelookup: " + line.substr(0, 200));
    CurlSample s;
    s.exit_code = j.contains("exitcode") && j["exitcode"].is_number_integer() ? j["exitcode"].get<int>() : -1;
    if (j.contains("response_code") && j["response_code"].is_number_integer())
        s.http_code = j["response_code"].get<int>();
    else if (j.contains("http_code") && j["http_code"].is_number_integer())
        s.http_code = j["http_code"].get<int>();
    s.total = number(j, "time_total");
    s.namelookup = number(j, "time_namelookup");
    double size = number(j, "size_download");
    s.size_download = size > 0 ? static_cast<uint64_t>(size) : 0;
    if (j.contains("url_effective") && j["url_effective"].is_string()) s.url = j["url_effective"].get<std::string>();
    if (j.contains("errormsg") && j["errormsg"].is_string()) s.error = j["errormsg"].get<std::string>();
    return s;
}

std::optional<double> percentile(std::vector<double> values, double p) {
    if (values.empty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    p = std::clamp(p, 0.0, 100.0);
    auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
    rank = std::clamp<size_t>(rank, 1, values.size());
    return values[rank - 1];
}

double mean(const std::vector<double>& values) {
    if (values.empty()) return 0;
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

BatchSummary summarize(const std::vector<CurlSample>& samples, double wall_seconds) {
    BatchSummary b;
    b.requests = samples.size();
    b.wall_seconds = wall_seconds;
    std::vector<double> total, lookup;
    for (const auto& s : samples) {
        total.push_back(s.total * 1000);
        lookup.push_back(s.namelookup * 1000);
        b.bytes += s.size_download;
        if (!s.ok()) {
            if (b.failed++ == 0)
                b.first_failure = (s.url.empty() ? std::string("?") : s.url) + ": exit " +
                                  std::to_string(s.exit_code) + (s.error.empty() ? "" : " (" + s.error + ")") +
                                  ", HTTP " + std::to_string(s.http_code);
        }
    }
    if (wall_seconds > 0) {
        b.requests_per_second = static_cast<double>(b.requests) / wall_seconds;
        b.mib_per_second = static_cast<double>(b.bytes) / (1024.0 * 1024.0) / wall_seconds;
    }
    b.avg_ms = mean(total);
    b.p50_ms = percentile(total, 50).value_or(0);
    b.p99_ms = percentile(total, 99).value_or(0);
    b.dns_avg_ms = mean(lookup);
    b.dns_p99_ms = percentile(lookup, 99).value_or(0);
    return b;
}

std::string percent_change(double value, double base) {
    if (base == 0) return "-";
    long pct = std::lround((value / base - 1) * 100);
    char buf[32];
    if (pct == 0)
        std::snprintf(buf, sizeof buf, "0 %%");
    else
        std::snprintf(buf, sizeof buf, "%+ld %%", pct);
    return buf;
}

}  // namespace sluice::bench
