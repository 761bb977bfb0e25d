#include "observe/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace sluice::observe {
namespace {

bool valid_name(const std::string& name, bool label) {
    if (name.empty()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!label && c == ':');
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return !(label && name.starts_with("__"));
}

// Integers as integers (counters reach 2^53 long after anyone cares);
// others with enough digits to read back the same double.
std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15)
        std::snprintf(buf, sizeof(buf), "%.0f", v);
    else
        std::snprintf(buf, sizeof(buf), "%.17g", v);
    return buf;
}

std::string escape_help(const std::string& help) {
    std::string out;
    for (char c : help) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

}  // namespace

nlohmann::json families_json(const std::vector<MetricFamily>& families) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : families) {
        nlohmann::json samples = nlohmann::json::array();
        for (const auto& s : f.samples) {
            nlohmann::json labels = nlohmann::json::object();
            for (const auto& [k, v] : s.labels) labels[k] = v;
            samples.push_back({{"labels", labels}, {"value", s.value}});
        }
        out.push_back({{"name", f.name},
                       {"help", f.help},
                       {"type", f.type == MetricType::counter ? "counter" : "gauge"},
                       {"samples", samples}});
    }
    return out;
}

std::string escape_label_value(const std::string& value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string render_prometheus(const std::vector<MetricFamily>& families) {
    std::string out;
    std::set<std::string> seen;
    for (const auto& f : families) {
        if (!valid_name(f.name, false)) throw std::invalid_argument("invalid metric name \"" + f.name + "\"");
        if (!seen.insert(f.name).second) throw std::invalid_argument("metric family \"" + f.name + "\" given twice");
        // The text format types an info metric as a gauge of value 1.
        const char* type = f.type == MetricType::counter ? "counter" : "gauge";
        out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
        out += "# TYPE " + f.name + " " + type + "\n";
        for (const auto& s : f.samples) {
            out += f.name;
            if (!s.labels.empty()) {
                out += '{';
                for (size_t i = 0; i < s.labels.size(); ++i) {
                    const auto& [k, v] = s.labels[i];
                    if (!valid_name(k, true))
                        throw std::invalid_argument("invalid label name \"" + k + "\" on " + f.name);
                    out += (i ? "," : "") + k + "=\"" + escape_label_value(v) + "\"";
                }
                out += '}';
            }
            out += ' ' + format_value(s.value) + '\n';
        }
    }
    return out;
}

}  // namespace sluice::observe
