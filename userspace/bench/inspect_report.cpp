#include "bench/inspect_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "bench/report.h"
#include "bench/results.h"
#include "bench/svg_chart.h"

namespace sluice::bench {
namespace {

using nlohmann::json;

const std::vector<std::pair<std::string, std::string>> kFamilies{{"v4", "IPv4"}, {"v6", "IPv6"}};

// A cell: median (min–max), or an en dash when there is nothing to summarise.
std::string cell(const std::vector<double>& v, int decimals) {
    return v.empty() ? "–" : format_spread(v, decimals);
}

double median(std::vector<double> v) {
    auto s = spread_of(std::move(v));
    return s ? s->median : 0;
}

// A setup field as the operator gave it: "5", "0.5", "64KiB"; "?" when absent.
std::string field(const json& setup, const std::string& key) {
    if (!setup.contains(key)) return "?";
    const json& v = setup[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<long long>());
    if (v.is_number()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", v.get<double>());
        return buf;
    }
    return v.dump();
}

std::string percent(double fraction, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%%", decimals, fraction * 100);
    return buf;
}

// (b)'s measurements: pattern count -> {pass: gbps}, and the reference paths.
struct PartB {
    std::map<int, std::map<int, double>> inspected;
    std::map<int, double> fast, kernel;
    bool empty() const { return inspected.empty() && fast.empty() && kernel.empty(); }
};

PartB part_b(const std::vector<json>& records) {
    PartB b;
    for (const auto& r : select(records, {{"part", "b"}})) {
        if (r.contains("event") || !r.contains("gbps") || !r.contains("pass")) continue;
        const std::string mode = r.value("mode", "");
        const int pass = r["pass"].get<int>();
        const double gbps = r["gbps"].get<double>();
        if (mode == "inspect")
            b.inspected[r.value("patterns", 0)][pass] = gbps;
        else if (mode == "fast")
            b.fast[pass] = gbps;
        else if (mode == "kernel")
            b.kernel[pass] = gbps;
    }
    return b;
}

std::string table_a(const std::vector<json>& records, const json& setup) {
    const std::string small = field(setup, "small"), limit = field(setup, "handoff_limit"),
                      streams = field(setup, "streams");
    std::string out = "iperf3 TCP LAN host → WAN host, Gbit/s (receiver), median (min–max) over " +
                      field(setup, "passes_a") + " interleaved passes, `-t " + field(setup, "time") + " -P " +
                      streams + "`; inspected = `inspect: bench` with " + small +
                      " patterns; handed off = `inspect: bench-handoff`, the same " + small +
                      " patterns client-to-server only, with `inspect-bytes: " + limit +
                      "` (each data connection is scanned for its first " + limit + ", then handed back to XDP)\n\n";
    MarkdownTable t({"family", "kernel forwarding", "sluice fast path (permit)", "inspected", "inspected, handed off",
                     "fast / kernel", "inspected / fast", "handed off / fast", "inspected / kernel"});
    for (const auto& [fam, label] : kFamilies) {
        auto get = [&](const char* mode) {
            return by_pass(records, {{"part", "a"}, {"mode", mode}, {"family", fam}}, "gbps");
        };
        auto k = get("kernel"), s = get("fast"), i = get("inspect"), h = get("handoff");
        if (k.empty() && s.empty() && i.empty() && h.empty()) continue;
        t.row({label, cell(values(k), 2), cell(values(s), 2), cell(values(i), 2), cell(values(h), 2),
               cell(per_pass_ratios(s, k), 2), cell(per_pass_ratios(i, s), 2), cell(per_pass_ratios(h, s), 2),
               cell(per_pass_ratios(i, k), 2)});
    }
    out += t.str() + "\nRatios: per pass, of the same pass and family; median (min–max) of those.";
    if (!select(records, {{"part", "a"}, {"mode", "handoff"}}).empty())
        out += " Every handed-off run was checked: the stage scanned at least " + streams + " × " + limit +
               " client→server (`inspect-bytes` of each data connection), handed at least " + streams +
               " connections back to XDP (`handoffs`), refused none (`handoff_refused`), and XDP renumbered "
               "segments after the hand-off (`tcp-spliced-after-inspection`).";
    return out + "\n";
}

std::string table_b(const std::vector<json>& records, const json& setup, const PartB& b) {
    std::string out = "iperf3 TCP IPv4 through the inspected path, Gbit/s (receiver), median (min–max) over " +
                      field(setup, "passes") + " interleaved passes, `-t " + field(setup, "time") + " -P " +
                      field(setup, "streams") + "`; the ruleset changed by `sluice reload`\n\n";
    // ("start" | "reload", patterns) -> seconds, in record order.
    std::map<std::pair<std::string, int>, std::vector<double>> times;
    for (const auto& r : select(records, {{"part", "b"}}))
        if (r.contains("event") && r.contains("seconds"))
            times[{r["event"].get<std::string>(), r.value("patterns", 0)}].push_back(r["seconds"].get<double>());

    MarkdownTable t({"patterns", "inspected", "inspected / fast path", "inspected / kernel",
                     "reload to this size, s"});
    for (const auto& [n, points] : b.inspected) {
        auto it = times.find({"reload", n});
        t.row({std::to_string(n), cell(values(points), 2), cell(per_pass_ratios(points, b.fast), 2),
               cell(per_pass_ratios(points, b.kernel), 2), it == times.end() ? "–" : cell(it->second, 2)});
    }
    t.row({"*fast path (permit)*", cell(values(b.fast), 2), "1", cell(per_pass_ratios(b.fast, b.kernel), 2), ""});
    t.row({"*kernel forwarding*", cell(values(b.kernel), 2), "", "1", ""});
    out += t.str() + "\n";
    if (b.inspected.size() >= 2) {
        const auto& [lo, lo_points] = *b.inspected.begin();
        const auto& [hi, hi_points] = *b.inspected.rbegin();
        out += "Flatness: inspected with " + std::to_string(hi) + " patterns / with " + std::to_string(lo) +
               ", per pass: " + cell(per_pass_ratios(hi_points, lo_points), 2) + ".\n";
    }
    std::string starts;
    for (const auto& [key, v] : times)
        if (key.first == "start")
            starts += (starts.empty() ? "" : ", ") + std::to_string(key.second) + " patterns " + cell(v, 1) + " s";
    if (!starts.empty())
        out += "`sluice run` until it reported running (BPF load, attach, stage start): " + starts + ".\n";
    out += "Ratios: per pass, against the fast path / kernel forwarding of the same pass; median (min–max). Every "
           "point was checked by its canary (the ruleset's own alert pattern, sent once: its counter must rise by "
           "one), so each number is the ruleset of that size.\n";

    // The scanner alone: pattern count -> its rounds, in record order.
    std::map<int, std::vector<json>> scan;
    for (const auto& r : select(records, {{"part", "s"}})) scan[r.value("patterns", 0)].push_back(r);
    if (!scan.empty()) {
        size_t rounds = 0;
        for (const auto& [n, v] : scan) rounds = std::max(rounds, v.size());
        out += "\nThe stage's scanner alone (`sluice_scan_rate`: the same rulesets compiled by the stage's own code, "
               "random bytes in 256 KiB chunks through one stream, one core, no sockets), median (min–max) of " +
               std::to_string(rounds) +
               " rounds; *scan share* = the inspected throughput above / the client-to-server scan rate: the part "
               "of one core that scanning needs at that throughput.\n\n";
        MarkdownTable s({"patterns", "compile, s (both directions)", "stream state, B",
                         "scan client→server, Gbit/s per core", "scan server→client", "scan share"});
        for (const auto& [n, v] : scan) {
            std::vector<double> compile, c2s, s2c;
            for (const auto& r : v) {
                compile.push_back(r.value("compile_s", 0.0));
                c2s.push_back(r.value("c2s_gbps", 0.0));
                s2c.push_back(r.value("s2c_gbps", 0.0));
            }
            auto it = b.inspected.find(n);
            std::string share = it != b.inspected.end() && median(c2s) > 0
                                    ? percent(median(values(it->second)) / median(c2s), 0)
                                    : "–";
            s.row({std::to_string(n), cell(compile, 2), std::to_string(v.front().value("stream_state_bytes", 0)),
                   cell(c2s, 1), cell(s2c, 1), share});
        }
        out += s.str();
    }
    return out;
}

std::string table_c(const std::vector<json>& records, const json& setup) {
    std::string out =
        "Short connections per second (connect, 80 B request, 200 B response, close; the client closes first), "
        "median (min–max) over " +
        field(setup, "passes") + " interleaved passes, " + field(setup, "conn_time") + " s each after " +
        field(setup, "conn_warmup") + " s warm-up, " + field(setup, "conn_threads") + " client threads × " +
        field(setup, "conn_concurrency") +
        " connections in flight; three paths only: a short connection never reaches `inspect-bytes`, so the "
        "hand-off path of (a) would measure the inspected path again\n\n";
    const std::vector<std::string> modes{"kernel", "fast", "inspect"};
    MarkdownTable t({"family", "kernel forwarding", "sluice fast path (permit)", "inspected", "fast / kernel",
                     "inspected / fast", "inspected / kernel"});
    for (const auto& [fam, label] : kFamilies) {
        auto rate = [&](const std::string& mode) {
            return by_pass(records, {{"part", "c"}, {"mode", mode}, {"family", fam}}, "per_second");
        };
        auto k = rate("kernel"), s = rate("fast"), i = rate("inspect");
        if (k.empty() && s.empty() && i.empty()) continue;
        t.row({label, cell(values(k), 0), cell(values(s), 0), cell(values(i), 0), cell(per_pass_ratios(s, k), 2),
               cell(per_pass_ratios(i, s), 2), cell(per_pass_ratios(i, k), 2)});
    }
    out += t.str() +
           "\nLatency of one connection (connect to close, as the client saw it), µs: median over passes of each "
           "pass's p50 / p99, and failed connections (reset, timeout, short answer) summed over passes:\n\n";
    MarkdownTable l({"family", "kernel p50 / p99", "fast path p50 / p99", "inspected p50 / p99",
                     "failed (kernel, fast, inspected)"});
    for (const auto& [fam, label] : kFamilies) {
        std::vector<std::string> cells;
        std::string fails;
        bool any = false;
        for (const auto& mode : modes) {
            auto runs = select(records, {{"part", "c"}, {"mode", mode}, {"family", fam}});
            if (runs.empty()) {
                cells.push_back("–");
                fails += std::string(fails.empty() ? "" : ", ") + "–";
                continue;
            }
            any = true;
            std::vector<double> p50, p99;
            uint64_t failed = 0;
            for (const auto& r : runs) {
                p50.push_back(r.value("p50_us", 0.0));
                p99.push_back(r.value("p99_us", 0.0));
                failed += r.value("failed", uint64_t{0});
            }
            cells.push_back(fixed(median(p50), 0) + " / " + fixed(median(p99), 0));
            fails += (fails.empty() ? "" : ", ") + std::to_string(failed);
        }
        if (!any) continue;
        cells.insert(cells.begin(), label);
        cells.push_back(fails);
        l.row(cells);
    }
    return out + l.str();
}

// One line per sluice run (the counters check_path summarised), and one per
// short-connection run that had failures, in the order measured.
std::string details(const std::vector<json>& records) {
    std::string out;
    for (const auto& r : records) {
        if (!r.contains("part") || r.contains("event")) continue;
        const std::string part = r["part"].get<std::string>();
        if (part != "a" && part != "b" && part != "c") continue;
        std::string label = part + " " + r.value("mode", "") +
                            (r.contains("patterns") ? " n=" + std::to_string(r["patterns"].get<int>()) : "") + " " +
                            r.value("family", "") + " pass " + std::to_string(r.value("pass", 0));
        if (!r.value("path", "").empty()) out += label + ": " + r.value("path", "") + "\n";
        if (r.value("failed", uint64_t{0}) > 0)
            out += label + ": " + std::to_string(r["failed"].get<uint64_t>()) +
                   " failed connections: " + r.value("client", "") + "\n";
    }
    return out;
}

}  // namespace

std::string inspect_report(const std::vector<json>& records) {
    auto setups = select(records, {{"event", "setup"}});
    auto ends = select(records, {{"event", "end"}});
    const json setup = setups.empty() ? json::object() : setups.front();
    const json end = ends.empty() ? json::object() : ends.front();
    std::string md = "## sluice inspection benchmark, " + field(setup, "date") + "\n\n";
    const long elapsed = end.contains("elapsed_s") ? end["elapsed_s"].get<long>() : 0;
    md += "Machine: " + field(setup, "machine") + "; load average (1, 5, 15 min) " + field(setup, "load_start") +
          " at the start, " + field(end, "load_end") + " at the end; the run took " + std::to_string(elapsed / 60) +
          " min " + std::to_string(elapsed % 60) + " s.\n\n";
    if (!select(records, {{"part", "a"}}).empty())
        md += "### (a) Throughput: kernel forwarding, fast path, inspected path, inspected and handed off\n\n" +
              table_a(records, setup) + "\n";
    PartB b = part_b(records);
    if (!b.empty()) {
        md += "### (b) Inspected throughput as the ruleset grows (IPv4)\n\n" + table_b(records, setup, b) + "\n";
        if (!setup.value("svg", "").empty()) md += "Chart: `" + setup.value("svg", "") + "`\n\n";
    }
    if (!select(records, {{"part", "c"}}).empty())
        md += "### (c) Short connections\n\n" + table_c(records, setup) + "\n";
    std::string d = details(records);
    if (!d.empty())
        md += "### Per-run counters\n\n"
              "sluice's datapath counters during each run (passed = handed to the kernel, which is how punted "
              "packets reach the stage) and the stage's own counters (connections accepted, bytes scanned; on the "
              "hand-off path also the share of what the server received that the stage scanned, the connections "
              "handed back to XDP and refused, and the segments XDP renumbered after a hand-off):\n\n```\n" +
              d + "```\n";
    while (md.size() > 1 && md[md.size() - 1] == '\n' && md[md.size() - 2] == '\n') md.pop_back();
    return md;
}

std::string inspect_chart(const std::vector<json>& records) {
    PartB b = part_b(records);
    if (b.inspected.empty()) return "";
    auto setups = select(records, {{"event", "setup"}});
    const json setup = setups.empty() ? json::object() : setups.front();
    std::string load = field(setup, "load_start");
    load = load.substr(0, load.find(' '));

    Chart c;
    c.title = "Inspected-path throughput vs ruleset size (IPv4, iperf3)";
    c.subtitles = {field(setup, "date") + "; " + field(setup, "machine") + "; load average " + load + " at the start",
                   "median and min–max of " + field(setup, "passes") + " interleaved passes, iperf3 -t " +
                       field(setup, "time") + " -P " + field(setup, "streams") +
                       "; the ruleset changed by sluice reload"};
    c.layout.panel_width = 880;
    c.layout.panel_height = 420;
    c.layout.left = 60;
    c.layout.right = 230;  // room for the labels at the right edge
    ChartPanel p;
    p.x_label = "patterns in the ruleset (log scale)";
    p.y_label = "Gbit/s (receiver)";
    p.x_scale = ChartXScale::Log10;
    p.right_labels = true;
    p.y_headroom = 0.10;
    p.y_ticks = 6;
    ChartSeries inspected;
    inspected.name = "inspected path (median, min–max whiskers)";
    inspected.colour = "#d62728";
    inspected.whisker_caps = true;
    inspected.value_labels = true;
    inspected.end_label = "inspected, " + std::to_string(b.inspected.rbegin()->first) + " patterns";
    for (const auto& [n, points] : b.inspected) inspected.points[n] = values(points);
    p.series.push_back(inspected);
    if (!b.kernel.empty())
        p.references.push_back({.name = "kernel forwarding", .colour = "#7a7a7a", .dash = "2 4",
                                .samples = values(b.kernel), .label_decimals = 2});
    if (!b.fast.empty())
        p.references.push_back({.name = "sluice fast path (permit)", .colour = "#1f77b4", .dash = "8 5",
                                .samples = values(b.fast), .label_decimals = 2});
    c.panels.push_back(p);
    return render_svg(c);
}

}  // namespace sluice::bench
