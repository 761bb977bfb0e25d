#include "bench/egress_report.h"

#include <map>
#include <sstream>

#include "bench/egress_measure.h"
#include "bench/report.h"
#include "bench/results.h"

namespace sluice::bench {
namespace {

struct Medians {
    std::map<std::string, double> m;  // field -> median over rounds
    size_t rounds = 0;
    bool has(const std::string& f) const { return m.count(f) > 0; }
    double at(const std::string& f) const {
        auto it = m.find(f);
        return it == m.end() ? 0 : it->second;
    }
};

Medians medians(const std::vector<nlohmann::json>& records, const std::string& mode, const std::string& scenario,
                const std::vector<std::string>& fields) {
    Medians out;
    for (const auto& f : fields) {
        auto per_pass = by_pass(records, {{"mode", mode}, {"scenario", scenario}}, f);
        auto s = spread_of(values(per_pass));
        if (s) {
            out.m[f] = s->median;
            out.rounds = std::max(out.rounds, s->n);
        }
    }
    return out;
}

std::string cell(const Medians& row, const Medians& base, const std::string& field, int decimals, bool is_base) {
    if (!row.has(field)) return "-";
    std::string v = fixed(row.at(field), decimals);
    if (is_base || !base.has(field)) return v;
    return v + " (" + percent_change(row.at(field), base.at(field)) + ")";
}

const std::vector<std::string> kRequestFields{"requests_per_second", "avg_ms", "p50_ms",
                                              "p99_ms",              "dns_avg_ms", "dns_p99_ms"};

}  // namespace

const std::vector<std::string>& egress_modes() {
    static const std::vector<std::string> modes{"baseline", "dns", "sluice-enforce", "dnsmasq-nft"};
    return modes;
}

std::string egress_mode_label(const std::string& mode) {
    if (mode == "baseline") return "baseline (forwarding resolver, no filter)";
    if (mode == "dns") return "dns only (sluice, names only)";
    if (mode == "sluice-enforce") return "sluice dns+enforce";
    if (mode == "dnsmasq-nft") return "dnsmasq + nftables sets";
    return mode;
}

std::string egress_report(const std::vector<nlohmann::json>& records) {
    std::ostringstream out;
    nlohmann::json setup = nlohmann::json::object();
    for (const auto& r : records)
        if (r.value("event", "") == "setup") setup = r;
    out << "### Egress by name, " << setup.value("date", std::string("?")) << "\n\n";
    out << setup.value("machine", std::string("?")) << "; load average " << setup.value("load_start", std::string("?"))
        << " at the start";
    if (setup.contains("quiet_busy_percent"))
        out << ", machine " << fixed(setup["quiet_busy_percent"].get<double>(), 1) << " % busy at the quiet gate";
    out << ". " << setup.value("rounds", 0) << " round(s), modes interleaved (the order rotates each round); "
        << "per mode and round " << setup.value("concurrency", 0) << " concurrent `curl -I` to "
        << setup.value("names", 0) << " HTTPS origins (half IPv4, half IPv6), then "
        << setup.value("download_streams", 0) << " parallel GETs of "
        << fixed(setup.value("download_bytes", 0.0) / (1024.0 * 1024.0), 1)
        << " MiB. Cells: median over rounds, change against baseline.";
    if (setup.contains("dnsmasq") && setup.contains("curl"))
        out << " " << setup["dnsmasq"].get<std::string>() << "; " << setup["curl"].get<std::string>() << ".";
    out << "\n\n";

    const auto base = medians(records, "baseline", "requests", kRequestFields);
    MarkdownTable t({"mode", "Req/s", "avg ms", "P50 ms", "P99 ms", "DNS lookup avg ms", "lookup P99 ms", "rounds"});
    std::map<std::string, Medians> rows;
    for (const auto& mode : egress_modes()) {
        auto row = medians(records, mode, "requests", kRequestFields);
        if (!row.rounds) continue;
        rows[mode] = row;
        const bool is_base = mode == "baseline";
        t.row({egress_mode_label(mode), cell(row, base, "requests_per_second", 0, is_base),
               cell(row, base, "avg_ms", 0, is_base), cell(row, base, "p50_ms", 0, is_base),
               cell(row, base, "p99_ms", 0, is_base), cell(row, base, "dns_avg_ms", 1, is_base),
               cell(row, base, "dns_p99_ms", 0, is_base), std::to_string(row.rounds)});
    }
    out << t.str() << "\n";

    // The families apart: IPv4 clients ask A, IPv6 clients A and AAAA.
    const std::vector<std::string> family_fields{"v4_avg_ms", "v4_dns_avg_ms", "v4_dns_p99_ms",
                                                 "v6_avg_ms", "v6_dns_avg_ms", "v6_dns_p99_ms"};
    const auto fbase = medians(records, "baseline", "requests", family_fields);
    if (fbase.rounds) {
        MarkdownTable f({"mode", "IPv4 avg ms", "IPv4 lookup avg ms", "IPv4 lookup P99 ms", "IPv6 avg ms",
                         "IPv6 lookup avg ms", "IPv6 lookup P99 ms"});
        for (const auto& mode : egress_modes()) {
            auto row = medians(records, mode, "requests", family_fields);
            if (!row.rounds) continue;
            const bool is_base = mode == "baseline";
            f.row({egress_mode_label(mode), cell(row, fbase, "v4_avg_ms", 0, is_base),
                   cell(row, fbase, "v4_dns_avg_ms", 1, is_base), cell(row, fbase, "v4_dns_p99_ms", 0, is_base),
                   cell(row, fbase, "v6_avg_ms", 0, is_base), cell(row, fbase, "v6_dns_avg_ms", 1, is_base),
                   cell(row, fbase, "v6_dns_p99_ms", 0, is_base)});
        }
        out << "By family (each family's requests of a batch apart; medians over rounds):\n\n" << f.str() << "\n";
    }

    const auto dbase = medians(records, "baseline", "download", {"mib_per_second"});
    MarkdownTable d({"mode", "download MiB/s", "rounds"});
    bool any_download = false;
    for (const auto& mode : egress_modes()) {
        auto row = medians(records, mode, "download", {"mib_per_second"});
        if (!row.rounds) continue;
        any_download = true;
        d.row({egress_mode_label(mode), cell(row, dbase, "mib_per_second", 1, mode == "baseline"),
               std::to_string(row.rounds)});
    }
    if (any_download) out << "Download (aggregate throughput of the parallel GETs):\n\n" << d.str() << "\n";

    // The goal, read off the medians: reported, not asserted.
    if (rows.count("baseline")) {
        const auto& b = rows["baseline"];
        const Medians* nft = rows.count("dnsmasq-nft") ? &rows["dnsmasq-nft"] : nullptr;
        MarkdownTable g({"mode", "lookup avg ≤ +10 %", "lookup P99 ≤ +10 %", "Req/s ≥ 0.97×", "P99 ≤ +15 %",
                         "better than dnsmasq + nftables"});
        auto yes = [](bool v) { return std::string(v ? "met" : "**not met**"); };
        for (const std::string mode : {"dns", "sluice-enforce"}) {
            if (!rows.count(mode)) continue;
            const auto& r = rows[mode];
            auto ratio = [&](const std::string& f) {
                return b.at(f) > 0 ? fixed(r.at(f) / b.at(f), 3) + "× " : std::string();
            };
            std::string better = "-";
            if (nft) {
                std::vector<std::string> worse;
                if (!(r.at("dns_avg_ms") < nft->at("dns_avg_ms"))) worse.push_back("lookup avg");
                if (!(r.at("dns_p99_ms") < nft->at("dns_p99_ms"))) worse.push_back("lookup P99");
                if (!(r.at("requests_per_second") > nft->at("requests_per_second"))) worse.push_back("Req/s");
                if (!(r.at("p99_ms") < nft->at("p99_ms"))) worse.push_back("P99");
                std::string list;
                for (const auto& w : worse) list += (list.empty() ? "" : ", ") + w;
                better = worse.empty() ? "met (all four)" : "**not met** (" + list + ")";
            }
            g.row({egress_mode_label(mode),
                   ratio("dns_avg_ms") + yes(r.at("dns_avg_ms") <= 1.10 * b.at("dns_avg_ms")),
                   ratio("dns_p99_ms") + yes(r.at("dns_p99_ms") <= 1.10 * b.at("dns_p99_ms")),
                   ratio("requests_per_second") +
                       yes(r.at("requests_per_second") >= 0.97 * b.at("requests_per_second")),
                   ratio("p99_ms") + yes(r.at("p99_ms") <= 1.15 * b.at("p99_ms")), better});
        }
        out << "Issue 20's goal (sluice against baseline and against dnsmasq + nftables, medians; a report, not a "
               "test):\n\n"
            << g.str() << "\n";
    }

    // What proved each mode was in the path, from the last round.
    std::map<std::string, std::string> proof;
    for (const auto& r : records)
        if (r.value("scenario", "") == "requests" && r.contains("in_path"))
            proof[r.value("mode", "")] = r["in_path"].get<std::string>();
    if (!proof.empty()) {
        out << "In the path (last round's proof):\n\n";
        for (const auto& mode : egress_modes())
            if (proof.count(mode)) out << "- " << egress_mode_label(mode) << ": " << proof[mode] << "\n";
        out << "\n";
    }
    size_t failed = 0;
    for (const auto& r : records) failed += r.value("failed", size_t{0});
    out << "Failed requests: " << failed << " (a failed request fails the run).\n";
    return out.str();
}

}  // namespace sluice::bench
