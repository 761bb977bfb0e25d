#include "perftest/compare.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "perftest/text.h"

namespace sluice::perftest {

namespace {

nlohmann::json spread_json(const Spread& s) {
    if (s.count == 0) return nullptr;
    return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"count", s.count}};
}

nlohmann::json range_json(const cluster::GbpsRange& r) {
    nlohmann::json j;
    j["applicable"] = r.applicable;
    j["min_gbps"] = r.min_gbps ? nlohmann::json(*r.min_gbps) : nlohmann::json(nullptr);
    j["max_gbps"] = r.max_gbps ? nlohmann::json(*r.max_gbps) : nlohmann::json(nullptr);
    j["describe"] = r.describe();
    return j;
}

}  // namespace

const char* to_string(Family family) { return family == Family::ipv4 ? "ipv4" : "ipv6"; }
const char* display_name(Family family) { return family == Family::ipv4 ? "IPv4" : "IPv6"; }

Spread summarize(std::vector<double> values) {
    Spread s;
    s.count = values.size();
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    size_t n = values.size();
    s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    s.min = values.front();
    s.max = values.back();
    return s;
}

std::string versus(const cluster::GbpsRange& expected, double gbps) {
    if (!expected.applicable || (!expected.min_gbps && !expected.max_gbps)) return "";
    if (expected.min_gbps && gbps < *expected.min_gbps) return "below";
    if (expected.max_gbps && gbps > *expected.max_gbps) return "above";
    return "within";
}

std::string format_gbps(double gbps) { return fixed(gbps, 2) + " Gbps"; }

std::string format_spread_gbps(const Spread& spread) {
    if (spread.count == 0) return "-";
    std::string s = format_gbps(spread.median);
    if (spread.count > 1) s += " (" + fixed(spread.min, 2) + "–" + fixed(spread.max, 2) + ")";
    return s;
}

CompareSummary summarize(const CompareRun& run) {
    CompareSummary out;
    for (Family family : run.families) {
        FamilySummary f;
        f.family = family;
        f.expected = family == Family::ipv4 ? run.expected_ipv4 : run.expected_ipv6;
        std::vector<double> gbps, sender, retransmits, baseline;
        std::map<int, double> sluice_by_pass, baseline_by_pass;
        for (const auto& m : run.measurements) {
            if (m.family != family) continue;
            bool is_sluice = m.config == "sluice";
            if (!m.result) {
                out.all_ok = false;
                if (is_sluice) {
                    ++f.failed;
                    if (f.first_error.empty()) f.first_error = m.error;
                } else {
                    ++f.baseline_failed;
                    if (f.first_error.empty()) f.first_error = m.config + ": " + m.error;
                }
                continue;
            }
            double g = m.result->receiver_bps / 1e9;
            if (is_sluice) {
                gbps.push_back(g);
                sender.push_back(m.result->sender_bps / 1e9);
                retransmits.push_back(static_cast<double>(m.result->retransmits));
                sluice_by_pass[m.pass] = g;
            } else {
                baseline.push_back(g);
                baseline_by_pass[m.pass] = g;
            }
        }
        f.gbps = summarize(gbps);
        f.sender_gbps = summarize(sender);
        f.retransmits = summarize(retransmits);
        f.baseline_gbps = summarize(baseline);
        std::vector<double> ratios;
        for (const auto& [pass, s] : sluice_by_pass) {
            auto b = baseline_by_pass.find(pass);
            if (b != baseline_by_pass.end() && b->second > 0) ratios.push_back(s / b->second);
        }
        f.ratio = summarize(ratios);
        if (f.gbps.count) f.versus_expected = versus(f.expected, f.gbps.median);
        out.families.push_back(std::move(f));
    }
    const FamilySummary* v4 = nullptr;
    const FamilySummary* v6 = nullptr;
    for (const auto& f : out.families) (f.family == Family::ipv4 ? v4 : v6) = &f;
    if (v4 && v6 && v4->gbps.count && v6->gbps.count && v4->gbps.median > 0) {
        out.gap_percent = (v4->gbps.median - v6->gbps.median) / v4->gbps.median * 100.0;
    }
    // The gap the expectations imply: from the middle of each range ("8-9"
    // -> 8.5), or the minimum when there is no upper bound ("22+").
    auto typical = [](const cluster::GbpsRange& r) -> std::optional<double> {
        if (!r.applicable || !r.min_gbps) return std::nullopt;
        return r.max_gbps ? (*r.min_gbps + *r.max_gbps) / 2 : *r.min_gbps;
    };
    if (v4 && v6) {
        auto e4 = typical(v4->expected);
        auto e6 = typical(v6->expected);
        if (e4 && e6 && *e4 > 0) out.expected_gap_percent = (*e4 - *e6) / *e4 * 100.0;
    }
    return out;
}

std::string render_compare(const CompareRun& run, const CompareSummary& summary) {
    std::ostringstream out;
    out << "Environment " << run.environment << ": iperf3 -P " << run.streams << " -t " << run.seconds
        << (run.quick ? " (quick)" : "") << ", " << run.passes << (run.passes == 1 ? " pass" : " passes");
    if (!run.baseline.empty()) out << ", baseline " << run.baseline << " interleaved (alternating which goes first)";
    out << "\nThroughput is what the receiver got: median (min–max) over passes.\n\n";

    std::vector<std::vector<std::string>> rows{{"Protocol", "Throughput", "Retransmits", "Expected", "vs expected"}};
    for (const auto& f : summary.families) {
        std::string throughput = f.gbps.count ? format_spread_gbps(f.gbps) : "failed";
        if (f.failed) throughput += " [" + std::to_string(f.failed) + " failed: " + f.first_error + "]";
        rows.push_back({display_name(f.family), throughput,
                        f.retransmits.count ? fixed(f.retransmits.median, 0) : "-", f.expected.describe(),
                        f.versus_expected.empty() ? "-" : f.versus_expected});
    }
    if (summary.families.size() == 2) {
        std::string expected_gap = summary.expected_gap_percent ? "≤ " + fixed(*summary.expected_gap_percent, 1) + "%" : "-";
        std::string verdict = "-";
        if (summary.gap_percent && summary.expected_gap_percent) {
            // A gap is judged by its size: IPv6 far ahead of IPv4 is as
            // unexpected as far behind (usually noise worth a second look).
            double gap = *summary.gap_percent, limit = *summary.expected_gap_percent;
            verdict = gap > limit ? "wider" : gap < -limit ? "reversed" : "within";
        }
        rows.push_back({"Gap", summary.gap_percent ? fixed(*summary.gap_percent, 1) + "%" : "-", "", expected_gap, verdict});
    }
    out << markdown_table(rows);

    if (!run.baseline.empty()) {
        out << "\nsluice against " << run.baseline
            << (run.baseline == "kernel" ? " forwarding (sluice detached)" : " (sluice detached, equivalent ruleset)")
            << ", same run; the ratio is taken within each pass:\n\n";
        std::vector<std::vector<std::string>> brows{{"Protocol", "sluice", run.baseline, "sluice / " + run.baseline}};
        for (const auto& f : summary.families) {
            std::string base = f.baseline_gbps.count ? format_spread_gbps(f.baseline_gbps) : "failed";
            if (f.baseline_failed) base += " [" + std::to_string(f.baseline_failed) + " failed]";
            std::string ratio = "-";
            if (f.ratio.count) {
                ratio = fixed(f.ratio.median, 2);
                if (f.ratio.count > 1) ratio += " (" + fixed(f.ratio.min, 2) + "–" + fixed(f.ratio.max, 2) + ")";
            }
            brows.push_back({display_name(f.family), f.gbps.count ? format_spread_gbps(f.gbps) : "failed", base, ratio});
        }
        out << markdown_table(brows);
    }
    return out.str();
}

nlohmann::json compare_to_json(const CompareRun& run, const CompareSummary& summary) {
    nlohmann::json j;
    j["environment"] = run.environment;
    j["baseline"] = run.baseline.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.baseline);
    j["passes"] = run.passes;
    j["quick"] = run.quick;
    j["iperf3"] = {{"streams", run.streams}, {"seconds", run.seconds}};
    j["ok"] = summary.all_ok;
    nlohmann::json table = nlohmann::json::array();
    for (const auto& f : summary.families) {
        nlohmann::json row;
        row["protocol"] = display_name(f.family);
        row["throughput_gbps"] = spread_json(f.gbps);
        row["sender_gbps"] = spread_json(f.sender_gbps);
        row["retransmits"] = spread_json(f.retransmits);
        row["failed"] = f.failed;
        if (!f.first_error.empty()) row["error"] = f.first_error;
        row["expected"] = range_json(f.expected);
        row["versus_expected"] = f.versus_expected.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.versus_expected);
        if (!run.baseline.empty()) {
            row["baseline_gbps"] = spread_json(f.baseline_gbps);
            row["baseline_failed"] = f.baseline_failed;
            row["ratio"] = spread_json(f.ratio);
        }
        table.push_back(std::move(row));
    }
    j["table"] = std::move(table);
    j["gap_percent"] = summary.gap_percent ? nlohmann::json(*summary.gap_percent) : nlohmann::json(nullptr);
    j["expected_gap_percent"] =
        summary.expected_gap_percent ? nlohmann::json(*summary.expected_gap_percent) : nlohmann::json(nullptr);
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& m : run.measurements) {
        nlohmann::json r{{"protocol", display_name(m.family)}, {"config", m.config}, {"pass", m.pass}, {"order", m.order}};
        if (m.result) {
            r["receiver_bps"] = m.result->receiver_bps;
            r["sender_bps"] = m.result->sender_bps;
            r["retransmits"] = m.result->retransmits;
            r["streams"] = m.result->streams;
            r["seconds"] = m.result->seconds;
        } else {
            r["error"] = m.error;
        }
        runs.push_back(std::move(r));
    }
    j["runs"] = std::move(runs);
    return j;
}

}  // namespace sluice::perftest
