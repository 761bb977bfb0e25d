#include "bench/scale_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "bench/results.h"
#include "bench/scale_checks.h"
#include "bench/svg_chart.h"

namespace sluice::bench {
namespace {

using nlohmann::json;
using Lines = std::vector<std::string>;
using PerPass = std::map<int, double>;

const std::vector<std::pair<std::string, std::string>> kSystems{
    {"sluice", "sluice"}, {"nft-linear", "nft linear"}, {"nft-set", "nft sets"}};
const std::vector<std::pair<std::string, std::string>> kKinds{
    {"src", "source-address rules"},
    {"port", "destination-port rules"},
    {"mixed", "mixed rules (source host, destination host, destination port in turn)"}};
const std::map<std::string, std::string> kColours{
    {"sluice", "#1f77b4"}, {"nft-linear", "#d62728"}, {"nft-set", "#2ca02c"}};

std::string printf_text(const char* format, double v, int digits) {
    char buf[128];
    std::snprintf(buf, sizeof buf, format, digits, v);
    return buf;
}

// Python's f"{x:,.{digits}f}" with the commas as spaces from 10,000 on.
std::string fmt(double x, int digits) {
    std::string plain = printf_text("%.*f", x, digits);
    if (std::fabs(x) < 10000) return plain;
    size_t start = plain[0] == '-' ? 1 : 0;
    size_t dot = plain.find('.');
    size_t int_end = dot == std::string::npos ? plain.size() : dot;
    std::string grouped;
    for (size_t i = start; i < int_end; ++i) {
        if (i > start && (int_end - i) % 3 == 0) grouped += ' ';
        grouped += plain[i];
    }
    return plain.substr(0, start) + grouped + plain.substr(int_end);
}

std::optional<double> med(const std::vector<double>& v) {
    auto s = spread_of(v);
    if (!s) return std::nullopt;
    return s->median;
}

std::string fixed2(double v, int digits) {
    return printf_text("%.*f", v, digits);
}

std::vector<double> vals(const PerPass& m) {
    return values(m);
}

std::string str(const json& r, const char* key) {
    return r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : "";
}

int integer(const json& r, const char* key) {
    return r.contains(key) && r[key].is_number() ? r[key].get<int>() : 0;
}

std::optional<double> number(const json& r, const char* key) {
    if (r.contains(key) && r[key].is_number()) return r[key].get<double>();
    return std::nullopt;
}

std::string setup_text(const json& setup, const char* key, const std::string& fallback = "?") {
    if (!setup.contains(key)) return fallback;
    const auto& v = setup[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_number()) {
        std::string s = printf_text("%.*f", v.get<double>(), 3);
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
        return s;
    }
    return fallback;
}

struct Data {
    json setup = json::object();
    json end = json::object();
    // (system, kind, n, proto) -> pass -> record
    std::map<std::tuple<std::string, std::string, int, std::string>, std::map<int, json>> a;
    // (system, kind, n) -> pass -> record
    std::map<std::tuple<std::string, std::string, int>, std::map<int, json>> b;
    std::map<std::tuple<std::string, std::string, int, std::string>, json> check;  // (part, kind, n, proto)
    std::map<std::tuple<std::string, std::string, std::string, int, std::string>, std::vector<double>>
        load;                  // (system, part, kind, n, proto)
    std::vector<json> probes;  // in the order taken
    // (kind, n) -> measure -> pass -> iqm_ns
    std::map<std::pair<std::string, int>, std::map<std::string, PerPass>> cost;
    std::map<std::pair<std::string, int>, std::vector<double>> apply_compile_ms;
    Lines details;

    explicit Data(const std::vector<json>& records) {
        for (const auto& r : records) {
            const std::string type = str(r, "type");
            if (r.contains("detail") && r["detail"].is_string() && !r["detail"].get<std::string>().empty())
                details.push_back(r["detail"].get<std::string>());
            if (str(r, "part") == "c" && (type == "cost" || type == "apply")) {
                std::string label = str(r, "label");
                auto colon = label.rfind(':');
                if (colon == std::string::npos) continue;
                std::pair<std::string, int> key(label.substr(0, colon), std::atoi(label.c_str() + colon + 1));
                if (type == "cost") {
                    if (auto v = number(r, "iqm_ns")) cost[key][str(r, "measure")][integer(r, "pass")] = *v;
                } else if (auto v = number(r, "compile_ms")) {
                    apply_compile_ms[key].push_back(*v);
                }
            } else if (type == "setup") {
                setup = r;
            } else if (type == "end") {
                end = r;
            } else if (type == "a") {
                a[{str(r, "system"), str(r, "kind"), integer(r, "n"), str(r, "proto")}][integer(r, "pass")] = r;
            } else if (type == "b") {
                b[{str(r, "system"), str(r, "kind"), integer(r, "n")}][integer(r, "pass")] = r;
            } else if (type == "check") {
                check[{str(r, "part"), str(r, "kind"), integer(r, "n"), str(r, "proto")}] = r;
            } else if (type == "load") {
                if (auto v = number(r, "seconds"))
                    load[{str(r, "system"), str(r, "part"), str(r, "kind"), integer(r, "n"), str(r, "proto")}]
                        .push_back(*v);
            } else if (type == "probe") {
                probes.push_back(r);
            }
        }
    }

    std::vector<std::pair<std::string, std::string>> systems() const {
        std::set<std::string> seen;
        for (const auto& [k, v] : a) seen.insert(std::get<0>(k));
        for (const auto& [k, v] : b) seen.insert(std::get<0>(k));
        if (!cost.empty()) seen.insert("sluice");
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& s : kSystems)
            if (seen.count(s.first)) out.push_back(s);
        return out;
    }

    std::vector<std::pair<std::string, std::string>> kinds() const {
        std::set<std::string> seen;
        for (const auto& [k, v] : a) seen.insert(std::get<1>(k));
        for (const auto& [k, v] : b) seen.insert(std::get<1>(k));
        for (const auto& [k, v] : cost) seen.insert(k.first);
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& k : kKinds)
            if (seen.count(k.first)) out.push_back(k);
        return out;
    }

    std::vector<int> a_counts(const std::string& kind, const std::string& proto) const {
        std::set<int> n;
        for (const auto& [k, v] : a)
            if (std::get<1>(k) == kind && std::get<3>(k) == proto) n.insert(std::get<2>(k));
        return {n.begin(), n.end()};
    }
    std::vector<int> b_counts(const std::string& kind) const {
        std::set<int> n;
        for (const auto& [k, v] : b)
            if (std::get<1>(k) == kind) n.insert(std::get<2>(k));
        return {n.begin(), n.end()};
    }
    std::vector<int> c_counts(const std::string& kind) const {
        std::set<int> n;
        for (const auto& [k, v] : cost)
            if (k.first == kind) n.insert(k.second);
        return {n.begin(), n.end()};
    }

    // A field of the (a) records of one point, by pass (the passes that have it).
    PerPass a_field(const std::string& system, const std::string& kind, int n, const std::string& proto,
                    const char* field) const {
        PerPass out;
        auto it = a.find({system, kind, n, proto});
        if (it == a.end()) return out;
        for (const auto& [pass, r] : it->second)
            if (auto v = number(r, field)) out[pass] = *v;
        return out;
    }
    PerPass b_field(const std::string& system, const std::string& kind, int n, const char* field) const {
        PerPass out;
        auto it = b.find({system, kind, n});
        if (it == b.end()) return out;
        for (const auto& [pass, r] : it->second)
            if (auto v = number(r, field)) out[pass] = *v;
        return out;
    }

    // (kind, n, proto) of the (a) sluice probes that got through.
    std::set<std::tuple<std::string, int, std::string>> filter_not_enforced(const std::string& kind) const {
        std::set<std::tuple<std::string, int, std::string>> out;
        for (const auto& p : probes)
            if (str(p, "part") == "a" && str(p, "system") == "sluice" && str(p, "verdict") != "blocked" &&
                (kind.empty() || str(p, "kind") == kind))
                out.insert({str(p, "kind"), integer(p, "n"), str(p, "proto")});
        return out;
    }
};

std::string row(const Lines& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + c + " |";
    return s;
}

std::string separator(size_t columns) {
    std::string s;
    for (size_t i = 0; i < columns; ++i) s += "|---";
    return s + "|";
}

std::string join(const Lines& items, const std::string& sep) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
    return s;
}

// Value columns, then ratio columns to the same system's 0-rule value of the same pass.
Lines table_values(const std::vector<int>& rows, const std::vector<std::pair<std::string, std::string>>& systems,
                   const std::function<PerPass(const std::string&, int)>& get, int digits,
                   const std::string& unit_note) {
    Lines head{"rules"};
    for (const auto& [s, label] : systems) head.push_back(label + " " + unit_note);
    const bool has_zero = std::find(rows.begin(), rows.end(), 0) != rows.end();
    if (has_zero)
        for (const auto& [s, label] : systems) head.push_back(label + " / 0 rules");
    Lines out{row(head), separator(1 + systems.size() * (has_zero ? 2 : 1))};
    for (int n : rows) {
        Lines cells{std::to_string(n)};
        for (const auto& [s, label] : systems) cells.push_back(scale_spread(vals(get(s, n)), digits));
        if (has_zero)
            for (const auto& [s, label] : systems) {
                PerPass v = get(s, n), zero = get(s, 0);
                cells.push_back(!v.empty() && !zero.empty() ? scale_spread(per_pass_ratios(v, zero), 2) : "–");
            }
        out.push_back(row(cells));
    }
    return out;
}

Lines section_a(const Data& d) {
    Lines out;
    const auto systems = d.systems();
    const std::string udp_len = setup_text(d.setup, "udp_len"), udp_streams = setup_text(d.setup, "udp_streams"),
                      time = setup_text(d.setup, "time"), passes = setup_text(d.setup, "passes"),
                      streams = setup_text(d.setup, "streams");
    for (const auto& [proto, title] : std::vector<std::pair<std::string, std::string>>{{"udp", "UDP"}, {"tcp", "TCP"}}) {
        for (const auto& [kind, kind_label] : d.kinds()) {
            auto rows = d.a_counts(kind, proto);
            if (rows.empty()) continue;
            out.push_back("#### (a) " + title + " through a stateless filter, " + kind_label);
            out.push_back("");
            if (proto == "udp")
                out.push_back("iperf3 `-u -b 0 -l " + udp_len + " -P " + udp_streams + " -t " + time +
                              "`: Gbit/s forwarded (UDP payload of the datagrams that reached the WAN host's "
                              "interface: what got through the firewall), median (min–max) over " +
                              passes + " passes; ratios per pass to the same system's 0-rule run of that pass.");
            else
                out.push_back("iperf3 `-P " + streams + " -t " + time + "`: Gbit/s received, median (min–max) over " +
                              passes + " passes; ratios per pass to the same system's 0-rule run of that pass.");
            out.push_back("");
            const std::string k = kind, p = proto;
            auto t = table_values(
                rows, systems, [&](const std::string& s, int n) { return d.a_field(s, k, n, p, "gbps"); }, 2,
                "Gbit/s");
            out.insert(out.end(), t.begin(), t.end());
            out.push_back("");
            if (proto == "udp") {
                out.push_back("Medians of: Mpps forwarded · loss before the WAN host (1 − forwarded / sent datagrams) "
                              "· Gbit/s the iperf3 client sent · Gbit/s iperf3's server read (the rest it lost to its "
                              "socket buffer, not to the firewall):");
                out.push_back("");
                Lines head{"rules"};
                for (const auto& [s, label] : systems) head.push_back(label + ": Mpps · loss · sent · read");
                out.push_back(row(head));
                out.push_back(separator(1 + systems.size()));
                for (int n : rows) {
                    Lines cells{std::to_string(n)};
                    for (const auto& [s, label] : systems) {
                        auto mp = med(vals(d.a_field(s, kind, n, proto, "mpps")));
                        auto lo = med(vals(d.a_field(s, kind, n, proto, "loss_pct")));
                        auto se = med(vals(d.a_field(s, kind, n, proto, "sent_gbps")));
                        auto ap = med(vals(d.a_field(s, kind, n, proto, "app_gbps")));
                        cells.push_back(!mp ? "–"
                                            : fixed2(*mp, 3) + " · " + fixed2(lo.value_or(0), 1) + " % · " +
                                                  fixed2(se.value_or(0), 2) + " · " + fixed2(ap.value_or(0), 2));
                    }
                    out.push_back(row(cells));
                }
                out.push_back("");
            }
            std::set<int> bad;
            for (const auto& [k2, n, pr] : d.filter_not_enforced(kind))
                if (pr == proto || kind == "src") bad.insert(n);
            bool has_sluice = std::any_of(systems.begin(), systems.end(), [](const auto& s) { return s.first == "sluice"; });
            if (!bad.empty() && has_sluice) {
                Lines ns;
                for (int n : bad) ns.push_back(std::to_string(n));
                out.push_back("**The sluice column does not measure a filter**: the probe of the last filter rule got "
                              "through sluice at " +
                              join(ns, ", ") +
                              " rules. This build parses `filters:` but does not run them; the column is the permit "
                              "policy alone.");
                out.push_back("");
            }
        }
    }
    return out;
}

Lines section_b(const Data& d) {
    Lines out;
    const auto systems = d.systems();
    for (const auto& [kind, kind_label] : d.kinds()) {
        auto rows = d.b_counts(kind);
        if (rows.empty()) continue;
        out.push_back("#### (b) New connections per second through the stateful policy, " + kind_label);
        out.push_back("");
        out.push_back("sluice_connrate, " + setup_text(d.setup, "conn_time") + " s counted per run, " +
                      setup_text(d.setup, "conn_threads") + " client threads × " +
                      setup_text(d.setup, "conn_concurrency") +
                      " connections in flight, 4 source addresses × 16 server ports; conn/s, median (min–max) over " +
                      setup_text(d.setup, "passes") + " passes; ratios per pass to the same system's 0-rule run.");
        out.push_back("");
        const std::string k = kind;
        auto t = table_values(
            rows, systems, [&](const std::string& s, int n) { return d.b_field(s, k, n, "rate"); }, 0, "conn/s");
        out.insert(out.end(), t.begin(), t.end());
        Lines failed;
        for (const auto& [s, label] : systems)
            for (int n : rows) {
                double f = 0;
                for (double v : vals(d.b_field(s, kind, n, "failed"))) f += v;
                if (f > 0) failed.push_back(s + " at " + std::to_string(n) + " rules: " + std::to_string(static_cast<long long>(f)));
            }
        if (!failed.empty()) {
            out.push_back("");
            out.push_back("Failed connections (reset, timeout, short answer), summed over passes: " +
                          join(failed, ", ") + ".");
        }
        out.push_back("");
        out.push_back("Latency of one connection, µs, median over passes of each pass's p50 / p99:");
        out.push_back("");
        Lines head{"rules"};
        for (const auto& [s, label] : systems) head.push_back(label);
        out.push_back(row(head));
        out.push_back(separator(1 + systems.size()));
        for (int n : rows) {
            Lines cells{std::to_string(n)};
            for (const auto& [s, label] : systems) {
                auto p50 = med(vals(d.b_field(s, kind, n, "p50")));
                auto p99 = med(vals(d.b_field(s, kind, n, "p99")));
                cells.push_back(p50 && p99 ? fixed2(*p50, 0) + " / " + fixed2(*p99, 0) : "–");
            }
            out.push_back(row(cells));
        }
        out.push_back("");
    }
    return out;
}

Lines section_c(const Data& d) {
    Lines out;
    if (d.cost.empty()) return out;
    auto cls = [](const std::map<std::string, PerPass>& m) {
        PerPass out;
        auto miss = m.find("deny_miss"), hit = m.find("deny_hit");
        if (miss == m.end() || hit == m.end()) return out;
        for (const auto& [p, v] : miss->second)
            if (hit->second.count(p)) out[p] = v - hit->second.at(p);
        return out;
    };
    auto measure = [](const std::map<std::string, PerPass>& m, const char* name) {
        auto it = m.find(name);
        return it == m.end() ? PerPass{} : it->second;
    };
    for (const auto& [kind, kind_label] : d.kinds()) {
        auto rows = d.c_counts(kind);
        if (rows.empty()) continue;
        auto base_it = d.cost.find({kind, 8});
        const std::map<std::string, PerPass>* base = base_it == d.cost.end() ? nullptr : &base_it->second;
        out.push_back("#### (c) sluice first-packet cost, " + kind_label);
        out.push_back("");
        out.push_back(
            "BPF_PROG_TEST_RUN, median (min–max) over " + setup_text(d.setup, "cost_passes") +
            " passes of each pass's interquartile mean; ratios per pass to the 8-rule config of the same pass. "
            "*classification*: the shipped `classify_policy()` alone (bpf/classify_cost.bpf.c on the datapath's maps: "
            "64 classifications of a LAN → WAN SYN per program run, repeat 200; the deciding rule is checked to be "
            "the permit after the N rules), ns per classification. *first packet*: xdp_main_prog at repeat 1, " +
            setup_text(d.setup, "cost_calls") +
            " calls, a TCP SYN of a new flow each (classification, session create, redirect). *denied, miss − hit*: "
            "a default-denied first packet minus the same packet answered by the per-CPU flow cache (classification "
            "plus one flow-cache update, through the whole pipeline). nftables has no equivalent: its cost per "
            "packet is not measurable this way.");
        out.push_back("");
        out.push_back("| rules | classification, ns | classification / 8 rules | first packet, ns | first packet / 8 "
                      "rules | denied, miss − hit, ns | miss − hit / 8 rules | compile, ms (median) |");
        out.push_back("|---|---|---|---|---|---|---|---|");
        for (int n : rows) {
            const auto& m = d.cost.at({kind, n});
            PerPass fp = measure(m, "first_packet"), only = measure(m, "classify"), c = cls(m);
            std::string r_only =
                base && !only.empty() ? scale_spread(per_pass_ratios(only, measure(*base, "classify")), 2) : "–";
            std::string r_fp = base ? scale_spread(per_pass_ratios(fp, measure(*base, "first_packet")), 2) : "–";
            std::string r_c = base ? scale_spread(per_pass_ratios(c, cls(*base)), 2) : "–";
            auto ac = d.apply_compile_ms.find({kind, n});
            auto comp = ac == d.apply_compile_ms.end() ? std::nullopt : med(ac->second);
            out.push_back("| " + std::to_string(n) + " | " + (only.empty() ? "–" : scale_spread(vals(only), 1)) +
                          " | " + r_only + " | " + scale_spread(vals(fp), 1) + " | " + r_fp + " | " +
                          scale_spread(vals(c), 1) + " | " + r_c + " | " + (comp ? fixed2(*comp, 1) : "–") + " |");
        }
        out.push_back("");
    }
    return out;
}

Lines section_configs(const Data& d) {
    Lines out;
    if (d.check.empty() && d.load.empty()) return out;
    out = {"#### Configs: size, compile and load", "",
           "`sluice check --json` on each generated sluice config (wall time of the whole command; `compile_ms` "
           "and `classifier_bytes` when this build prints them), the time from `sluice run` to its `running` line, "
           "and the time of `nft -f` for the nftables rule sets (medians over the loads of the run).",
           "",
           "| part | kind | N | proto | sluice check | check, s | compile_ms | classifier_bytes | sluice start, s "
           "| nft linear load, s | nft sets load, s |",
           "|---|---|---|---|---|---|---|---|---|---|---|"};
    std::set<std::tuple<std::string, std::string, int, std::string>> keys;
    for (const auto& [k, v] : d.check) keys.insert(k);
    for (const auto& [k, v] : d.load) keys.insert({std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k)});
    for (const auto& [part, kind, n, proto] : keys) {
        const json* chk = nullptr;
        if (auto it = d.check.find({part, kind, n, proto}); it != d.check.end())
            chk = &it->second;
        else if (kind == "src")
            if (auto it2 = d.check.find({part, kind, n, "any"}); it2 != d.check.end()) chk = &it2->second;
        auto load = [&](const std::string& system) {
            auto it = d.load.find({system, part, kind, n, proto});
            return it == d.load.end() || it->second.empty() ? std::string("–") : fixed2(*med(it->second), 2);
        };
        std::string wall = "–";
        if (chk)
            if (auto w = number(*chk, "wall_s")) wall = fixed2(*w, 2);
        out.push_back("| " + part + " | " + kind + " | " + std::to_string(n) + " | " + proto + " | " +
                      (chk ? str(*chk, "status") : "–") + " | " + wall + " | " +
                      (chk ? check_number_text(chk->value("compile_ms", json())) : "–") + " | " +
                      (chk ? check_number_text(chk->value("classifier_bytes", json())) : "–") + " | " +
                      load("sluice") + " | " + load("nft-linear") + " | " + load("nft-set") + " |");
    }
    out.push_back("");
    return out;
}

Lines section_probes(const Data& d) {
    Lines out;
    if (d.probes.empty()) return out;
    Lines bad;
    for (const auto& p : d.probes)
        if (str(p, "verdict") != "blocked")
            bad.push_back("(" + str(p, "part") + ") " + str(p, "system") + " " + str(p, "kind") + " " +
                          std::to_string(integer(p, "n")) + " " + str(p, "proto"));
    out = {"#### Probes", "",
           "The first time each rule set was in force, a probe matching only its last rule was sent (UDP datagrams, "
           "or a TCP connect) with a control that must pass: " +
               std::to_string(d.probes.size()) + " probes, " + std::to_string(d.probes.size() - bad.size()) +
               " blocked as they must be."};
    if (!bad.empty()) out.push_back(" Got through: " + join(bad, "; ") + ".");
    out.push_back("");
    return out;
}

}  // namespace

std::string scale_spread(std::vector<double> values, int digits) {
    auto s = spread_of(std::move(values));
    if (!s) return "–";
    return fmt(s->median, digits) + " (" + fmt(s->min, digits) + "–" + fmt(s->max, digits) + ")";
}

std::string scale_report_markdown(const std::vector<json>& records) {
    Data d(records);
    const json& s = d.setup;
    int elapsed = d.end.contains("elapsed_s") && d.end["elapsed_s"].is_number() ? d.end["elapsed_s"].get<int>() : 0;
    const std::string port_width = setup_text(s, "port_width");
    Lines md{"## sluice policy-at-scale benchmark, " + setup_text(s, "date"), ""};
    md.push_back("Git revision " + setup_text(s, "rev") + ". Machine: " + setup_text(s, "machine") +
                 "; load average (1, 5, 15 min) " + setup_text(s, "load_start") + " at the start, " +
                 setup_text(d.end, "load_end") + " at the end; the run took " + std::to_string(elapsed / 60) +
                 " min " + std::to_string(elapsed % 60) + " s. " + setup_text(s, "nft_version") +
                 "; nf_conntrack_max " + setup_text(s, "ct_max") + ". Method: docs/scale.md.");
    md.push_back("");
    if (setup_text(s, "quick") == "1") {
        md.push_back("**Quick run** (`--quick`): few counts, one pass, 1 s per run. It checks the plumbing; its "
                     "numbers are not results.");
        md.push_back("");
    }
    md.push_back("N rules that match none of the traffic, then what lets it through. Rules: source 198.19.x.y/32 "
                 "(source-address rules; the traffic comes from 198.18.1.x) or destination port 20000+i of the "
                 "traffic's protocol (port rules" +
                 std::string(port_width == "1" || port_width == "?" ? "" : ", " + port_width + " ports each") +
                 "; the traffic goes to 5201 and 5301–5316). One run per point per pass; counts go up on odd passes "
                 "and down on even ones, and the systems rotate which goes first at each point.");
    md.push_back("");
    Lines a = section_a(d), b = section_b(d), c = section_c(d);
    if (!a.empty()) {
        md.insert(md.end(),
                  {"### (a) Throughput through a stateless filter", "",
                   "sluice: a `filters:` entry on lan0 with the N rules (`action: drop`), then a permit policy (at 0 "
                   "rules the filter is attached with no rules). nftables: the N rules in a forward chain (`policy "
                   "drop`, WAN-side packets accepted first, the permit last), every packet marked `notrack` in a raw "
                   "prerouting chain: no conntrack, as nf-hipac's table. Port rules are UDP rules for the UDP runs "
                   "and TCP rules for the TCP runs.",
                   ""});
        md.insert(md.end(), a.begin(), a.end());
    }
    if (!b.empty()) {
        md.insert(md.end(),
                  {"### (b) New connections per second through the stateful policy", "",
                   "sluice: N `deny` policies before the permit (`tcp-time-wait: 10s`). nftables: `ct state "
                   "established,related accept` first, then the N rules (or the set), then the accept; conntrack's "
                   "TIME_WAIT set to 10 s in the firewall namespace. Only a connection's first packet meets the "
                   "rules in either.",
                   ""});
        md.insert(md.end(), b.begin(), b.end());
    }
    if (!c.empty()) {
        md.insert(md.end(), {"### (c) First-packet cost (sluice only)", ""});
        md.insert(md.end(), c.begin(), c.end());
    }
    for (const Lines& part : {section_configs(d), section_probes(d)}) md.insert(md.end(), part.begin(), part.end());
    if (std::string svg = setup_text(s, "svg", ""); !svg.empty()) md.insert(md.end(), {"Chart: `" + svg + "`", ""});
    if (!d.details.empty()) {
        md.insert(md.end(), {"#### Per-run counters", "",
                             "sluice's datapath counters during each sluice run (checked: XDP saw and forwarded the "
                             "traffic, no policy deny or filter drop hit it), conntrack entries after each nftables "
                             "run, probes:",
                             "", "```"});
        md.insert(md.end(), d.details.begin(), d.details.end());
        md.insert(md.end(), {"```", ""});
    }
    std::string text = join(md, "\n");
    if (text.empty() || text.back() != '\n') text += "\n";
    return text;
}

std::string scale_report_svg(const std::vector<json>& records) {
    Data d(records);
    const json& s = d.setup;
    const auto kinds = d.kinds();
    std::vector<std::string> systems;
    for (const auto& [id, label] : d.systems()) systems.push_back(id);
    auto label_of = [](const std::string& id) {
        for (const auto& [s, label] : kSystems)
            if (s == id) return label;
        return id;
    };
    struct Row {
        std::string title, ylabel;
        std::function<std::pair<std::vector<int>, std::vector<ChartSeries>>(const std::string& kind)> get;
        std::function<std::string(const std::string& kind)> flag;
    };
    std::vector<Row> rows;
    auto series_of = [&](const std::vector<int>& counts,
                         const std::function<std::vector<double>(const std::string&, int)>& samples) {
        std::vector<ChartSeries> lines;
        for (const auto& sys : systems) {
            ChartSeries ser;
            ser.name = label_of(sys);
            ser.colour = kColours.at(sys);
            for (int n : counts) ser.points[n] = samples(sys, n);
            lines.push_back(ser);
        }
        return lines;
    };
    auto a_row = [&](const std::string& proto, const std::string& title) {
        Row r;
        r.title = title;
        r.ylabel = proto == "udp" ? "Gbit/s forwarded" : "Gbit/s received";
        r.get = [&, proto](const std::string& kind) {
            auto counts = d.a_counts(kind, proto);
            return std::make_pair(counts, series_of(counts, [&, proto, kind](const std::string& sys, int n) {
                                      return vals(d.a_field(sys, kind, n, proto, "gbps"));
                                  }));
        };
        r.flag = [&, proto](const std::string& kind) {
            for (const auto& [k, n, pr] : d.filter_not_enforced(kind))
                if (pr == proto || kind == "src")
                    return std::string("sluice: filter not enforced by this build (probe passed): permit policy alone");
            return std::string();
        };
        return r;
    };
    auto has_proto = [&](const std::string& proto) {
        return std::any_of(d.a.begin(), d.a.end(), [&](const auto& kv) { return std::get<3>(kv.first) == proto; });
    };
    if (has_proto("udp")) rows.push_back(a_row("udp", "(a) UDP -l " + setup_text(s, "udp_len") + ", stateless filter"));
    if (has_proto("tcp")) rows.push_back(a_row("tcp", "(a) TCP -P " + setup_text(s, "streams") + ", stateless filter"));
    auto no_flag = [](const std::string&) { return std::string(); };
    if (!d.b.empty())
        rows.push_back({"(b) new connections/s, stateful policy", "conn/s",
                        [&](const std::string& kind) {
                            auto counts = d.b_counts(kind);
                            return std::make_pair(counts, series_of(counts, [&, kind](const std::string& sys, int n) {
                                                      return vals(d.b_field(sys, kind, n, "rate"));
                                                  }));
                        },
                        no_flag});
    if (!d.cost.empty())
        rows.push_back({"(c) sluice, first packet (BPF_PROG_TEST_RUN)", "ns per packet",
                        [&](const std::string& kind) {
                            auto counts = d.c_counts(kind);
                            ChartSeries ser;
                            ser.name = "sluice";
                            ser.colour = kColours.at("sluice");
                            for (int n : counts) {
                                const auto& m = d.cost.at({kind, n});
                                auto it = m.find("first_packet");
                                ser.points[n] = it == m.end() ? std::vector<double>{} : vals(it->second);
                            }
                            return std::make_pair(counts, std::vector<ChartSeries>{ser});
                        },
                        no_flag});
    if (rows.empty() || kinds.empty()) return "";

    Chart chart;
    chart.title = "Policy at scale: N rules that match none of the traffic (IPv4)";
    std::string load_start = setup_text(s, "load_start");
    chart.subtitles = {setup_text(s, "date") + ", " + setup_text(s, "rev") + "; " + setup_text(s, "machine") +
                           "; load average " + load_start.substr(0, load_start.find(' ')) + " at the start",
                       "median and min–max of " + setup_text(s, "passes") + " interleaved passes ((c): " +
                           setup_text(s, "cost_passes") + "), one run per point per pass; iperf3 -t " +
                           setup_text(s, "time") + (setup_text(s, "quick") == "1" ? "; QUICK RUN (plumbing only)" : "")};
    chart.columns = static_cast<int>(kinds.size());
    for (const auto& r : rows)
        for (const auto& [kind, kind_label] : kinds) {
            ChartPanel p;
            auto [counts, lines] = r.get(kind);
            // mixed (part (c) only) has its table in the report, not a panel.
            if (!counts.empty() && (kind == "src" || kind == "port")) {
                p.title = r.title + " · " + (kind == "src" ? "source rules" : "port rules");
                p.flag = r.flag(kind);
                p.x_label = "rules (evenly spaced, not to scale)";
                p.y_label = r.ylabel;
                p.series = lines;
            }
            chart.panels.push_back(p);
        }
    return render_svg(chart);
}

}  // namespace sluice::bench
