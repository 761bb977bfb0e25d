// `sluice bench inspect` (docs/inspect-bench.md), one run:
//   (a) iperf3 TCP throughput LAN host -> WAN host through the single lab's
//       firewall: kernel forwarding (nothing attached) vs the sluice fast
//       path (a `permit` policy) vs the inspected path (`inspect: bench`, a
//       small ruleset that does not match iperf3's traffic) vs the inspected
//       path with a hand-off (`inspect: bench-handoff`, the same patterns
//       client-to-server only, `inspect-bytes: 64KiB`: the stage scans the
//       first 64 KiB of each data connection and hands it back to XDP), IPv4
//       and IPv6;
//   (b) the inspected path's throughput (IPv4) as the ruleset grows (1, 10,
//       50, 100, 1000 patterns by default; `sluice reload` between points),
//       with the fast path and kernel forwarding measured in the same passes,
//       and the stage's scanner alone on the same rulesets
//       (tests/sluice_scan_rate: compile time, scan rate of one core, no
//       sockets);
//   (c) short connections per second (open, one small request, one small
//       response, close; tests/sluice_connrate) on the first three paths (a
//       short connection never reaches inspect-bytes, so it is never handed
//       off).
// Passes are interleaved: every pass measures every path, and the order
// rotates from pass to pass. Cells are median (min–max) over passes; ratios
// are per pass, against the fast path of the same pass. Every sluice run is
// checked to have taken the path it is named after (inspect_path.h), every
// ruleset size by its canary, every kernel run to have had no XDP program.
#include <chrono>
#include <memory>
#include <sstream>
#include <thread>

#include "common/option_checks.h"
#include "bench/benchmark.h"
#include "bench/connrate_run.h"
#include "bench/inspect_canary.h"
#include "bench/inspect_path.h"
#include "bench/inspect_patterns.h"
#include "bench/inspect_report.h"
#include "bench/interrupt.h"
#include "bench/iperf_run.h"
#include "bench/lab.h"
#include "bench/report.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"
#include "cluster/topology.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

// As given; 0 / "" = not given: the default, or the --quick value.
struct Options {
    int passes = 0;       // 3; --quick 1
    int passes_a = 0;     // 4, or --passes when only that is given; --quick 1
    int seconds = 0;      // 5; --quick 2
    int streams = 4;
    std::string counts;   // "1 10 50 100 1000"; --quick "1 10 100"
    int small = 10;
    double conn_time = 0;  // 3; --quick 1
    int conn_concurrency = 32;
    bool skip_a = false, skip_b = false, skip_c = false;
    std::string svg;      // <build>/inspect-bench.svg
};

// What this run uses.
struct Settings {
    int passes = 3, passes_a = 4, seconds = 5, streams = 4, small = 10;
    std::vector<int> counts;
    double conn_time = 3, conn_warmup = 0.5;
    int conn_threads = 2, conn_concurrency = 32;
    bool run_a = true, run_b = true, run_c = true;
    std::string svg;
};

Result<std::vector<int>> parse_counts(const std::string& text) {
    std::vector<int> out;
    std::istringstream in(text);
    std::string word;
    while (in >> word) {
        size_t used = 0;
        int n = 0;
        try {
            n = std::stoi(word, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != word.size() || n < 1)
            return make_error("--counts: '" + word + "' is not a pattern count (a whole number, at least 1)");
        out.push_back(n);
    }
    if (out.empty()) return make_error("--counts: no pattern count given");
    return out;
}

Result<Settings> settle(const Options& o, const BenchRun& run) {
    Settings s;
    const bool q = run.quick;
    s.passes = o.passes ? o.passes : q ? 1 : 3;
    s.passes_a = o.passes_a ? o.passes_a : o.passes ? o.passes : q ? 1 : 4;
    s.seconds = o.seconds ? o.seconds : q ? 2 : 5;
    s.streams = o.streams;
    s.small = o.small;
    auto counts = parse_counts(!o.counts.empty() ? o.counts : q ? "1 10 100" : "1 10 50 100 1000");
    if (!counts) return counts.error();
    s.counts = *counts;
    s.conn_time = o.conn_time > 0 ? o.conn_time : q ? 1 : 3;
    s.conn_concurrency = o.conn_concurrency;
    s.run_a = !o.skip_a;
    s.run_b = !o.skip_b;
    s.run_c = !o.skip_c;
    s.svg = o.svg.empty() ? run.build_dir + "/inspect-bench.svg" : o.svg;
    return s;
}

// Ports: iperf3 5201 (permit) / 5202 (inspect) / 5203 (handoff); short
// connections 5301-5316 (permit) / 5401-5416 (inspect). Kernel forwarding
// uses the permit ports.
int iperf_port(const std::string& mode) {
    return mode == "inspect" ? 5202 : mode == "handoff" ? 5203 : 5201;
}
std::string conn_ports(const std::string& mode) {
    return mode == "inspect" ? "5401-5416" : "5301-5316";
}

const std::vector<std::string> kModesA{"kernel", "fast", "inspect", "handoff"};
const std::vector<std::string> kModesC{"kernel", "fast", "inspect"};  // a short connection never reaches inspect-bytes

// Four source addresses of the LAN host: (c) spreads its client tuples over them.
const std::vector<std::string> kLan4Sources{cluster::kLanHost4, "198.18.1.11", "198.18.1.12", "198.18.1.13"};
const std::vector<std::string> kLan6Sources{cluster::kLanHost6, "2001:2:0:1::11", "2001:2:0:1::12",
                                            "2001:2:0:1::13"};

std::string printf_string(const char* format, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, format, args...);
    return buf;
}

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

class InspectRun {
public:
    InspectRun(BenchRun& run, const Settings& s, Lab& lab, SluiceFirewall& fw)
        : run_(run), s_(s), lab_(lab), fw_(fw) {}

    Status measure();

private:
    Status setup();
    Status part_a();
    Status part_b();
    Status part_c();
    Status scanner_alone();

    Status sluice_on(const std::string& config);
    Status sluice_off();
    Result<PathSnapshot> snapshot();
    Status canary(int patterns);
    Status iperf_one(const std::string& part, const std::string& mode, const std::string& fam, int pass,
                     int patterns = 0);
    Status conn_one(const std::string& mode, const std::string& fam, int pass);
    Status run_pass(const std::string& part, int pass);

    BenchRun& run_;
    const Settings& s_;
    Lab& lab_;
    SluiceFirewall& fw_;
    std::string connrate_, scanrate_, small_config_;
    std::map<int, std::string> check_configs_;  // (b)'s configs by pattern count, also sluice_scan_rate's
    uint64_t conn_offset_ = 0;
};

Status InspectRun::sluice_on(const std::string& config) {
    if (auto st = fw_.start(config); !st) return st;
    // Let the start's CPU burst (BPF load, hyperscan compile) pass.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    return {};
}

Status InspectRun::sluice_off() {
    if (fw_.running()) return fw_.stop();  // proves no XDP program is left
    return verify_no_pipeline(lab_, "fw", {"lan0", "wan0"});
}

Result<PathSnapshot> InspectRun::snapshot() {
    PathSnapshot snap;
    auto stats = fw_.stats();
    if (!stats) return with_context("sluice show stats", stats.error());
    snap.stats = *stats;
    auto inspect = fw_.show("inspect");
    if (!inspect) return with_context("cannot read the inspection counters", inspect.error());
    auto flat = flatten_inspect(*inspect);
    if (!flat) return flat.error();
    snap.inspect = *flat;
    return snap;
}

// One short connection on the inspected ports carrying the canary of the
// N-pattern ruleset; its counter must go up by one, which proves the stage
// scans with that ruleset (after a start or a reload).
Status InspectRun::canary(int patterns) {
    auto count = [&]() -> Result<uint64_t> {
        auto doc = fw_.show("inspect");
        if (!doc) return doc.error();
        auto flat = flatten_inspect(*doc);
        if (!flat) return flat.error();
        return pattern_matches(*flat, "bench", "canary");
    };
    auto before = count();
    if (!before) return before.error();
    if (auto st = canary_exchange(lab_.ns("lan"), cluster::kWanHost4, 5401, canary_text(patterns)); !st)
        return with_context("canary connection for " + std::to_string(patterns) + " patterns failed", st.error());
    auto after = count();
    if (!after) return after.error();
    const long long moved = static_cast<long long>(*after) - static_cast<long long>(*before);
    if (moved != 1)
        return make_error("the canary of the " + std::to_string(patterns) + "-pattern ruleset matched " +
                          std::to_string(moved) + " times (expected 1): the stage is not running that ruleset");
    return {};
}

Status InspectRun::iperf_one(const std::string& part, const std::string& mode, const std::string& fam, int pass,
                             int patterns) {
    if (auto st = check_interrupted(); !st) return st;
    const bool v4 = fam == "v4";
    const std::string seen = v4 ? cluster::kLanHost4 : cluster::kLanHost6;
    const std::string what = "iperf3 " + part + " " + mode + " " + fam + " pass " + std::to_string(pass) +
                             (patterns ? " (" + std::to_string(patterns) + " patterns)" : "");
    PathSnapshot before;
    if (mode == "kernel") {
        if (auto st = verify_no_pipeline(lab_, "fw", {"lan0", "wan0"}); !st) return with_context(what, st.error());
    } else {
        auto b = snapshot();
        if (!b) return with_context(what, b.error());
        before = *b;
    }
    IperfSpec spec;
    spec.target = v4 ? cluster::kWanHost4 : cluster::kWanHost6;
    spec.bind = seen;
    spec.port = iperf_port(mode);
    spec.seconds = s_.seconds;
    spec.streams = s_.streams;
    auto outcome = run_iperf(lab_, spec);
    if (!outcome) return with_context(what + " failed", outcome.error());
    if (outcome->server_saw != seen)
        return make_error(what + ": the server saw " + outcome->server_saw + " as the client, expected " + seen);
    PathCheck check;
    if (mode != "kernel") {
        auto after = snapshot();
        if (!after) return with_context(what, after.error());
        PathExpectation e{.mode = mode,
                          .received = static_cast<uint64_t>(outcome->client.receiver_bytes),
                          .connections = static_cast<uint64_t>(s_.streams) + 1,
                          .streams = static_cast<uint64_t>(s_.streams)};
        check = check_path(e, before, *after);
        if (!check.ok())
            return make_error(what + " did not take the " + mode + " path: " + check.problem_text() +
                              "\n  counters: " + check.summary);
    }
    nlohmann::json record{{"part", part},
                          {"mode", mode},
                          {"family", fam},
                          {"pass", pass},
                          {"gbps", outcome->gbps()},
                          {"received_bytes", outcome->client.receiver_bytes},
                          {"server_saw", outcome->server_saw},
                          {"path", check.summary}};
    if (patterns) record["patterns"] = patterns;
    run_.results->add(record);
    std::string note;
    if (mode == "handoff") {
        auto get = [&](const char* k) { return check.stage.count(k) ? check.stage.at(k) : 0; };
        const double share = outcome->client.receiver_bytes > 0
                                 ? static_cast<double>(get("bytes_client_to_server")) / outcome->client.receiver_bytes
                                 : 0;
        note = printf_string("  (handed off %llu of %d streams, %llu refused; scanned %.2f%% of received)",
                             static_cast<unsigned long long>(get("handoffs")), s_.streams,
                             static_cast<unsigned long long>(get("handoff_refused")), share * 100);
    }
    run_.out() << printf_string("   pass %d  %-8s %s %-6s %8.3f Gbit/s", pass, mode.c_str(), fam.c_str(),
                                patterns ? ("n=" + std::to_string(patterns)).c_str() : "", outcome->gbps())
               << note << std::endl;
    return {};
}

Status InspectRun::conn_one(const std::string& mode, const std::string& fam, int pass) {
    if (auto st = check_interrupted(); !st) return st;
    const bool v4 = fam == "v4";
    const std::string what = "short connections " + mode + " " + fam + " pass " + std::to_string(pass);
    PathSnapshot before;
    if (mode == "kernel") {
        if (auto st = verify_no_pipeline(lab_, "fw", {"lan0", "wan0"}); !st) return with_context(what, st.error());
    } else {
        auto b = snapshot();
        if (!b) return with_context(what, b.error());
        before = *b;
    }
    ConnrateClient spec;
    spec.address = v4 ? cluster::kWanHost4 : cluster::kWanHost6;
    spec.ports = conn_ports(mode);
    spec.sources = v4 ? kLan4Sources : kLan6Sources;
    spec.duration = s_.conn_time;
    spec.warmup = s_.conn_warmup;
    spec.threads = s_.conn_threads;
    spec.concurrency = s_.conn_concurrency;
    auto o = run_connrate(lab_, connrate_, spec, &conn_offset_);
    if (!o) return with_context(what, o.error());
    PathCheck check;
    if (mode != "kernel") {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the last connections' closes reach the stage
        auto after = snapshot();
        if (!after) return with_context(what, after.error());
        check = check_path({.mode = mode, .received = 0, .connections = o->completed, .streams = 0}, before, *after);
        if (!check.ok())
            return make_error(what + " did not take the " + mode + " path: " + check.problem_text() +
                              "\n  counters: " + check.summary);
    }
    nlohmann::json record{{"part", "c"},          {"mode", mode},          {"family", fam},
                          {"pass", pass},         {"per_second", o->per_second}, {"completed", o->completed},
                          {"failed", o->failures}, {"p50_us", o->p50_us},   {"p99_us", o->p99_us},
                          {"path", check.summary}};
    if (o->failures) {
        std::string client = o->json;
        while (!client.empty() && (client.back() == '\n' || client.back() == ' ')) client.pop_back();
        record["client"] = client;
    }
    run_.results->add(record);
    run_.out() << printf_string("   pass %d  %-8s %s  %9.1f conn/s  (p50 %llu µs, p99 %llu µs, %llu failed)", pass,
                                mode.c_str(), fam.c_str(), o->per_second, static_cast<unsigned long long>(o->p50_us),
                                static_cast<unsigned long long>(o->p99_us),
                                static_cast<unsigned long long>(o->failures))
               << std::endl;
    return {};
}

// Pass p starts at path (p-1) mod M of the part's M paths (a: kernel, fast,
// inspect, handoff; c: kernel, fast, inspect) and goes on in that order, so
// over k*M passes each path comes first, second, ... equally often; IPv6
// goes first on even passes. sluice runs only when the path needs it.
Status InspectRun::run_pass(const std::string& part, int pass) {
    for (const auto& mode : rotated(part == "a" ? kModesA : kModesC, pass)) {
        if (mode == "kernel") {
            if (auto st = sluice_off(); !st) return st;
        } else if (!fw_.running()) {
            if (auto st = sluice_on(small_config_); !st) return st;
            std::string stage;
            std::istringstream log(fw_.log_tail(200));
            for (std::string line; std::getline(log, line);)
                if (auto at = line.find("inspection stage running"); at != std::string::npos)
                    stage = line.substr(at);
            run_.out() << "   sluice started in " << fixed(fw_.started_in(), 1) << "s: " << stage << std::endl;
            if (auto st = canary(s_.small); !st) return st;
        }
        for (const auto& fam : families_for_pass(pass)) {
            Status st = part == "a" ? iperf_one("a", mode, fam, pass) : conn_one(mode, fam, pass);
            if (!st) return st;
        }
    }
    return {};
}

Status InspectRun::setup() {
    // (c)'s servers also answer the canary (port 5401): always needed.
    auto connrate = run_.tool("sluice_connrate");
    if (!connrate) return connrate.error();
    connrate_ = *connrate;
    if (s_.run_b) {
        auto tool = run_.tool("sluice_scan_rate");
        if (!tool) return tool.error();
        scanrate_ = *tool;
    }
    for (size_t i = 1; i < kLan4Sources.size(); ++i) {
        if (auto st = lab_.must("lan", {"ip", "addr", "add", kLan4Sources[i] + "/24", "dev", "eth0"}); !st) return st;
        if (auto st = lab_.must("lan", {"ip", "addr", "add", kLan6Sources[i] + "/64", "dev", "eth0", "nodad"}); !st)
            return st;
    }
    auto small = lab_.write_file("fw-small.yaml", inspect_bench_config(s_.small, true));
    if (!small) return small.error();
    small_config_ = *small;
    if (auto st = fw_.check(small_config_); !st)
        return with_context("sluice check rejected the benchmark config", st.error());
    for (const auto& ports : {std::string("5301-5316"), std::string("5401-5416")}) {
        ConnrateServer server;
        server.addresses = {cluster::kWanHost4, cluster::kWanHost6};
        server.ports = ports;
        server.threads = 2;
        auto p = start_connrate_server(lab_, connrate_, server, "connrate-server-" + ports);
        if (!p) return p.error();
    }
    return {};
}

Status InspectRun::part_a() {
    run_.out() << "== (a) iperf3 -t " << s_.seconds << " -P " << s_.streams
               << " through: kernel forwarding, sluice fast path, inspected path (" << s_.small
               << " patterns), inspected and handed off (inspect-bytes " << kHandoffLimit << "); " << s_.passes_a
               << " passes\n";
    for (int pass = 1; pass <= s_.passes_a; ++pass)
        if (auto st = run_pass("a", pass); !st) return st;
    return {};
}

Status InspectRun::part_c() {
    run_.out() << "\n== (c) short connections, " << printf_string("%g", s_.conn_time) << "s per run, " << s_.conn_threads
               << " client threads x " << s_.conn_concurrency
               << " in flight, through: kernel forwarding, sluice fast path, inspected path; " << s_.passes
               << " passes\n";
    for (int pass = 1; pass <= s_.passes; ++pass)
        if (auto st = run_pass("c", pass); !st) return st;
    return {};
}

Status InspectRun::part_b() {
    std::string counts;
    for (int n : s_.counts) counts += (counts.empty() ? "" : " ") + std::to_string(n);
    run_.out() << "\n== (b) iperf3 (IPv4) through the inspected path as the ruleset grows: " << counts
               << " patterns; " << s_.passes << " passes\n";
    for (int n : s_.counts) {
        auto path = lab_.write_file("check-" + std::to_string(n) + ".yaml", inspect_bench_config(n, false));
        if (!path) return path.error();
        if (auto st = fw_.check(*path); !st)
            return with_context("sluice check rejected the " + std::to_string(n) + "-pattern config", st.error());
        check_configs_[n] = *path;
    }
    const std::string b_config = lab_.tmp() + "/fw-b.yaml";
    auto write_b = [&](int n) -> Status {
        auto p = lab_.write_file("fw-b.yaml", inspect_bench_config(n, false));
        if (!p) return p.error();
        return {};
    };
    int current = 0;  // the pattern count sluice runs with (0: none yet)
    auto start_with = [&](int n, int pass) -> Status {
        if (auto st = write_b(n); !st) return st;
        if (auto st = sluice_on(b_config); !st) return st;
        current = n;
        run_.out() << "   sluice (" << n << " patterns) started in " << fixed(fw_.started_in(), 1) << "s" << std::endl;
        run_.results->add(
            {{"part", "b"}, {"event", "start"}, {"patterns", n}, {"pass", pass}, {"seconds", fw_.started_in()}});
        return {};
    };
    // Points: kernel, fast, then the counts (0 stands for kernel, -1 for fast);
    // odd passes in that order, even passes reversed.
    std::vector<int> points{0, -1};
    points.insert(points.end(), s_.counts.begin(), s_.counts.end());
    for (int pass = 1; pass <= s_.passes; ++pass) {
        for (int point : alternated(points, pass)) {
            if (point == 0) {
                if (auto st = sluice_off(); !st) return st;
                if (auto st = iperf_one("b", "kernel", "v4", pass); !st) return st;
            } else if (point == -1) {
                if (!fw_.running()) {
                    if (auto st = start_with(current ? current : s_.counts.front(), pass); !st) return st;
                    if (auto st = canary(current); !st) return st;
                }
                if (auto st = iperf_one("b", "fast", "v4", pass); !st) return st;
            } else {
                if (!fw_.running()) {
                    if (auto st = start_with(point, pass); !st) return st;
                } else if (current != point) {
                    if (auto st = write_b(point); !st) return st;
                    auto took = fw_.reload();
                    if (!took)
                        return with_context("sluice reload to " + std::to_string(point) + " patterns failed",
                                            took.error());
                    run_.results->add(
                        {{"part", "b"}, {"event", "reload"}, {"patterns", point}, {"pass", pass}, {"seconds", *took}});
                    current = point;
                    std::this_thread::sleep_for(std::chrono::seconds(1));
                }
                if (auto st = canary(point); !st) return st;
                if (auto st = iperf_one("b", "inspect", "v4", pass, point); !st) return st;
            }
        }
    }
    return {};
}

// The stage's scanner alone, three rounds over the counts: ascending,
// descending, ascending.
Status InspectRun::scanner_alone() {
    run_.out() << "\n== (b) the stage's scanner alone (sluice_scan_rate: compile, then random bytes through one "
                  "stream per direction, one core)\n";
    for (int round = 1; round <= 3; ++round) {
        for (int n : alternated(s_.counts, round == 2 ? 2 : 1)) {
            if (auto st = check_interrupted(); !st) return st;
            const std::string what = "sluice_scan_rate on the " + std::to_string(n) + "-pattern ruleset";
            auto out = lab_.output("", {scanrate_, check_configs_.at(n), "--seconds", "0.5"}, std::chrono::minutes(5));
            if (!out) return with_context(what + " failed", out.error());
            nlohmann::json line;
            std::istringstream lines(*out);
            for (std::string text; std::getline(lines, text);) {
                auto j = nlohmann::json::parse(text, nullptr, false);
                if (!j.is_discarded() && j.is_object() && j.value("ruleset", "") == "bench") line = j;
            }
            if (!line.is_object() || !line.contains("c2s_gbps"))
                return make_error(what + " printed no result for the ruleset bench: " + *out);
            const double compile_s = line.value("compile_s", 0.0), c2s = line.value("c2s_gbps", 0.0),
                         s2c = line.value("s2c_gbps", 0.0);
            const uint64_t state = line.value("stream_state_bytes", uint64_t{0});
            run_.results->add({{"part", "s"},
                               {"patterns", n},
                               {"round", round},
                               {"compile_s", compile_s},
                               {"stream_state_bytes", state},
                               {"c2s_gbps", c2s},
                               {"s2c_gbps", s2c}});
            run_.out() << printf_string(
                              "   round %d  n=%-5d compile %6.2f s  stream state %4llu B  scan %6.1f / %6.1f Gbit/s "
                              "(c2s / s2c)",
                              round, n, compile_s, static_cast<unsigned long long>(state), c2s, s2c)
                       << std::endl;
        }
    }
    return {};
}

Status InspectRun::measure() {
    if (auto st = setup(); !st) return st;
    if (s_.run_a)
        if (auto st = part_a(); !st) return st;
    if (s_.run_c)
        if (auto st = part_c(); !st) return st;
    if (s_.run_b)
        if (auto st = part_b(); !st) return st;
    if (auto st = sluice_off(); !st) return st;
    if (s_.run_b)
        if (auto st = scanner_alone(); !st) return st;
    return {};
}

Status run_inspect(BenchRun& run, const Options& o) {
    auto settled = settle(o, run);
    if (!settled) return settled.error();
    const Settings& s = *settled;
    if (auto st = check_machine({"iperf3"}); !st) return st;
    if (s.run_a && s.passes_a % 4 != 0)
        run.out() << "sluice bench inspect: note: (a) rotates 4 paths; with " << s.passes_a
                  << " passes not every path comes first, second, third and fourth equally often\n";
    const auto t0 = Clock::now();
    nlohmann::json counts = nlohmann::json::array();
    for (int n : s.counts) counts.push_back(n);
    run.results->add({{"event", "setup"},
                      {"date", utc_now()},
                      {"machine", machine_line()},
                      {"load_start", load_average()},
                      {"passes", s.passes},
                      {"passes_a", s.passes_a},
                      {"time", s.seconds},
                      {"streams", s.streams},
                      {"small", s.small},
                      {"counts", counts},
                      {"conn_time", s.conn_time},
                      {"conn_warmup", s.conn_warmup},
                      {"conn_threads", s.conn_threads},
                      {"conn_concurrency", s.conn_concurrency},
                      {"handoff_limit", kHandoffLimit},
                      {"svg", s.run_b ? s.svg : ""}});
    Status result;
    {
        auto lab = Lab::create("single", run.prefix, run.out());
        if (!lab) return lab.error();
        SluiceFirewall fw(**lab);
        InspectRun measurement(run, s, **lab, fw);
        result = measurement.measure();
        if (!result) {
            std::string tail = fw.log_tail(30);
            tail.erase(0, tail.find_first_not_of('\n'));
            while (!tail.empty() && tail.back() == '\n') tail.pop_back();
            if (!tail.empty())
                result = make_error(result.error().message + "\n--- sluice daemon log (last 30 lines) ---\n" + tail);
        }
    }  // the firewall stops, the lab goes
    if (!result) return result;
    run.results->add({{"event", "end"},
                      {"load_end", load_average()},
                      {"elapsed_s", static_cast<long>(seconds_since(t0))}});
    if (s.run_b) {
        std::string chart = inspect_chart(run.results->records());
        if (!chart.empty()) {
            if (auto st = write_report(s.svg, chart); !st) return st;
            run.out() << "sluice bench inspect: chart written to " << s.svg << "\n";
        }
    }
    return {};
}

}  // namespace

Benchmark inspect_benchmark() {
    auto o = std::make_shared<Options>();
    Benchmark b;
    b.name = "inspect";
    b.summary =
        "the inspection stage's cost: iperf3 and short connections through kernel forwarding, the fast path, the "
        "inspected path and a hand-off; throughput as the ruleset grows";
    b.doc = "docs/inspect-bench.md";
    b.add_options = [o](CLI::App& app) {
        app.add_option("--passes", o->passes,
                       "passes of (b) and (c), and of (a) unless --passes-a is given (default 3, --quick 1)")
            ->check(positive_number());
        app.add_option("--passes-a", o->passes_a,
                       "passes of (a) (default 4, or N of --passes when given; --quick 1); (a) rotates 4 paths, so "
                       "a multiple of 4 is fair")
            ->check(positive_number());
        app.add_option("--time", o->seconds, "iperf3 -t of (a) and (b) (default 5, --quick 2)")
            ->check(positive_number());
        app.add_option("--streams", o->streams, "iperf3 -P")->capture_default_str()->check(positive_number());
        app.add_option("--counts", o->counts,
                       "the pattern counts of (b), e.g. \"1 10 50 100 1000\" (the default; --quick \"1 10 100\")");
        app.add_option("--small", o->small, "patterns in the ruleset of (a) and (c)")
            ->capture_default_str()
            ->check(positive_number());
        app.add_option("--conn-time", o->conn_time,
                       "seconds counted per short-connection run, after 0.5 s of warm-up (default 3, --quick 1)")
            ->check(positive_number());
        app.add_option("--conn-concurrency", o->conn_concurrency, "connections in flight per client thread (2 threads)")
            ->capture_default_str()
            ->check(positive_number());
        app.add_flag("--skip-a", o->skip_a, "leave out (a)");
        app.add_flag("--skip-b", o->skip_b, "leave out (b) and the scanner alone");
        app.add_flag("--skip-c", o->skip_c, "leave out (c)");
        app.add_option("--svg", o->svg,
                       "the chart of (b) (default: <build>/inspect-bench.svg; pass docs/inspect-bench.svg to record "
                       "a run in the docs)");
    };
    b.run = [o](BenchRun& run) -> Status { return run_inspect(run, *o); };
    b.report = inspect_report;
    return b;
}

}  // namespace sluice::bench
