// The Prometheus text exposition format (version 0.0.4): metric families
// with HELP and TYPE, samples with escaped label values. What is exported is
// the caller's; this only writes it down correctly (names checked, label
// values escaped, every family once with its samples together).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace sluice::observe {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { counter, gauge, info };

struct Sample {
    Labels labels;
    double value = 0;
};

struct MetricFamily {
    std::string name;   // with its _total suffix for counters
    std::string help;
    MetricType type = MetricType::counter;
    std::vector<Sample> samples;

    MetricFamily& add(Labels labels, double value) {
        samples.push_back({std::move(labels), value});
        return *this;
    }
};

// One exposition: families in the order given. A name that is not a valid
// metric name, or a family given twice, is a programming error: it throws
// std::invalid_argument (the tests cover every family the daemon exports).
std::string render_prometheus(const std::vector<MetricFamily>& families);

// The same families as JSON, for `sluice show metrics --json`:
// [{"name", "help", "type", "samples": [{"labels": {...}, "value"}]}].
nlohmann::json families_json(const std::vector<MetricFamily>& families);

// Label value escaping: backslash, double quote and newline.
std::string escape_label_value(const std::string& value);

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace sluice::observe
