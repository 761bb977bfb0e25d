#include "bench/scale_checks.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "bench/schedule.h"

namespace sluice::bench {
namespace {

// The first value named `key` anywhere in the object (the fields may come
// nested, e.g. under a per-zone-pair or "classifier" object).
nlohmann::json find_number(const nlohmann::json& node, const std::string& key) {
    if (node.is_object()) {
        auto it = node.find(key);
        if (it != node.end() && it->is_number()) return *it;
        for (const auto& [k, v] : node.items()) {
            auto found = find_number(v, key);
            if (!found.is_null()) return found;
        }
    } else if (node.is_array()) {
        for (const auto& v : node) {
            auto found = find_number(v, key);
            if (!found.is_null()) return found;
        }
    }
    return nullptr;
}

bool starts_with(const std::string& s, const std::string& p) {
    return s.rfind(p, 0) == 0;
}

}  // namespace

ScaleConfigCheck read_sluice_check(const std::string& json_text) {
    ScaleConfigCheck c;
    auto r = nlohmann::json::parse(json_text, nullptr, false);
    if (r.is_discarded() || !r.is_object()) {
        c.why = "unreadable JSON from sluice check";
        return c;
    }
    if (!r.value("valid", false)) {
        std::string msg;
        if (r.contains("errors") && r["errors"].is_array())
            for (const auto& e : r["errors"]) {
                std::string m = e.is_object() && e.contains("message") && e["message"].is_string()
                                    ? e["message"].get<std::string>()
                                    : "?";
                msg += (msg.empty() ? "" : "; ") + m;
            }
        if (msg.size() > 300) msg.resize(300);
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        c.why = msg.empty() ? "?" : msg;
        return c;
    }
    c.ok = true;
    c.compile_ms = find_number(r, "compile_ms");
    c.classifier_bytes = find_number(r, "classifier_bytes");
    return c;
}

std::string check_number_text(const nlohmann::json& v) {
    if (v.is_number_float()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.1f", v.get<double>());
        return buf;
    }
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    return "–";
}

ScaleRunCheck check_sluice_run(const Counters& delta) {
    std::map<std::string, uint64_t> drops, filt, passes;
    for (const auto& [k, v] : delta) {
        if (v == 0) continue;
        if (starts_with(k, "drop-")) drops[k] = v;
        if (k.find("filter") != std::string::npos) filt[k] = v;
        if (starts_with(k, "pass-")) passes[k] = v;
    }
    auto get = [&](const char* k) {
        auto it = delta.find(k);
        return it == delta.end() ? uint64_t{0} : it->second;
    };
    auto join = [](const std::map<std::string, uint64_t>& m) {
        std::string s;
        for (const auto& [k, v] : m) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
        return s;
    };
    uint64_t passed = 0;
    for (const auto& [k, v] : passes) passed += v;
    ScaleRunCheck c;
    c.summary = "rx=" + std::to_string(get("rx")) + " forward=" + std::to_string(get("forward")) +
                " session-created=" + std::to_string(get("session-created")) + " passed=" + std::to_string(passed);
    if (!passes.empty()) c.summary += " (" + join(passes) + ")";
    if (!drops.empty()) c.summary += " " + join(drops);
    if (!filt.empty()) c.summary += " filter: " + join(filt);
    if (get("rx") == 0 || get("forward") == 0) c.bad.push_back("sluice's XDP program saw or forwarded nothing");
    for (const auto& [k, v] : drops)
        if (starts_with(k, "drop-policy") || k.find("filter") != std::string::npos || k == "drop-session-table-full")
            c.bad.push_back(k + " = " + std::to_string(v));
    return c;
}

ProbeVerdict udp_probe_verdict(const ProbeCounts& received, const std::string& probe_source, int probe_port,
                               const std::string& control_source, int control_port) {
    auto count = [&](const std::string& src, int port) {
        auto it = received.find(src + ":" + std::to_string(port));
        return it == received.end() ? uint64_t{0} : it->second;
    };
    ProbeVerdict v;
    if (count(control_source, control_port) == 0)
        v.error = "the control datagrams to :" + std::to_string(control_port) + " did not arrive";
    v.verdict = count(probe_source, probe_port) == 0 ? "blocked" : "passed";
    return v;
}

ProbeVerdict tcp_probe_verdict(const std::string& probe, const std::string& control) {
    ProbeVerdict v;
    v.verdict = probe;
    if (control != "passed") v.error = "the control connection got no answer (" + control + ")";
    return v;
}

ProbeConsequence probe_consequence(const std::string& part, const std::string& system, const std::string& verdict) {
    if (verdict == "blocked") return ProbeConsequence::Fine;
    if (part == "a" && system == "sluice") return ProbeConsequence::Warn;
    return ProbeConsequence::Fatal;
}

UdpFigures udp_figures(uint64_t rx_packets, uint64_t sent_packets, double sent_seconds, double sent_bps,
                       double received_bps, int length) {
    UdpFigures f;
    const double secs = sent_seconds > 0 ? sent_seconds : 1;
    const uint64_t fwd = std::min(rx_packets, sent_packets);
    f.gbps = static_cast<double>(fwd) * length * 8 / secs / 1e9;
    f.sent_gbps = sent_bps / 1e9;
    f.mpps = static_cast<double>(fwd) / secs / 1e6;
    f.loss_pct = sent_packets ? 100.0 * (1 - static_cast<double>(fwd) / static_cast<double>(sent_packets)) : 100.0;
    f.app_gbps = received_bps / 1e9;
    return f;
}

std::vector<ScalePoint> scale_points(const std::vector<std::string>& kinds, const std::vector<int>& counts, int pass) {
    std::vector<ScalePoint> out;
    for (const auto& k : alternated(kinds, pass))
        for (int n : alternated(counts, pass)) out.push_back({k, n});
    return out;
}

std::vector<std::string> scale_protocols(int pass) {
    return alternated<std::string>({"udp", "tcp"}, pass);
}

std::vector<std::string> split_words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

Result<std::vector<int>> parse_counts(const std::string& text) {
    std::set<int> counts;
    for (const auto& w : split_words(text)) {
        if (w.empty() || w.size() > 9 || w.find_first_not_of("0123456789") != std::string::npos)
            return make_error("--counts: not a number: " + w);
        counts.insert(std::stoi(w));
    }
    return std::vector<int>(counts.begin(), counts.end());
}

}  // namespace sluice::bench
