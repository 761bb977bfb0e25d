// sluice_xdp_cost: the per-packet cost of the XDP pipeline, as a ratio to the
// least an XDP forwarder can do (bpf/baseline_redirect.bpf.c), both measured
// with BPF_PROG_TEST_RUN in the same run.
//
// Time is the kernel's own per-run duration (bpfilter's way), reported to
// Google Benchmark as manual time, so each benchmark's "Time" column is
// ns/packet. Programs are interleaved: every pass runs sluice and the baseline
// back to back (alternating which goes first), and the summary at the end
// gives median and min–max over passes plus the sluice/baseline ratio.
//
// Source NAT: the same established flow, once to a destination the config
// does not translate and once to one it source-translates, both at repeat 1
// (BPF_PROG_TEST_RUN reruns a program on the buffer the previous run left: a
// translated packet no longer matches its session), in the same passes; the
// summary adds their ratio.
//
// Observability (--observability): instead of the above, one datapath (its
// XDP build and its TC build, tc_main_prog, on the same maps) with
// flow logging and drop capture off ("plain") and on ("observed": every
// event logged, no rate limit, every drop captured and read; BenchEnv's
// set_observability switches every few calls, same maps and sessions), on
// an established flow (repeat), a first packet (its open event) and a denied
// SYN (its deny event and capture record); the summary gives plain /
// observed per pass.
// This is `sluice bench observe`'s part (c): the datapath's own cost, which
// the end-to-end parts cannot resolve to a few per cent on a noisy machine.
//
//   sluice_xdp_cost [--passes=5] [--calls=200] [--repeat=200] [--first_calls=2000]
//                [--nat_calls=4000] [--observability [--json_out=FILE]] [--summary_out=FILE]
//                [Google Benchmark flags]
//
// Needs root (namespaces, BPF). kernel.bpf_stats_enabled must be 0.
#include <benchmark/benchmark.h>
#include <linux/bpf.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_env.h"
#include "map_readers.h"
#include "xdp_runner.h"

extern "C" {
#include "map_names.h"
}

namespace sluice::bench {
namespace {

struct Options {
    int passes = 5;
    int calls = 200;          // BPF_PROG_TEST_RUN calls per pass, established flow
    int repeat = 200;         // runs per call, established flow (≤ kMaxRepeatPerCall)
    int first_calls = 2000;   // calls per pass, first packet (repeat 1 each)
    int nat_calls = 4000;     // calls per pass, established flow with and without source NAT (repeat 1 each)
    bool observability = false;  // plain vs observed datapath instead of sluice vs baseline
    std::string summary_out;  // markdown copy of the summary
    std::string json_out;     // --observability: one JSON line per case and pass
};

enum class Program { sluice, baseline };
const char* program_name(Program p) { return p == Program::sluice ? "sluice" : "baseline"; }

enum class Kind {
    established,      // no NAT, repeat --repeat
    established_r1,   // no NAT, repeat 1: the yardstick of established_nat
    established_nat,  // source NAT, repeat 1
    first_packet,     // SYN, session deleted before each call, repeat 1
    denied,           // SYN no policy permits (--observability only), repeat 1
};

const char* kind_name(Kind k) {
    switch (k) {
        case Kind::established:
            return "established_";
        case Kind::established_r1:
            return "established_r1_";
        case Kind::established_nat:
            return "established_nat_";
        case Kind::first_packet:
            return "first_packet_";
        case Kind::denied:
            return "denied_";
    }
    return "?";
}

struct Case {
    Kind kind;
    Family family;
    std::string name() const { return kind_name(kind) + std::string(family_name(family)); }
};

const FlowFrames& flow_of(const BenchEnv& env, Case c) {
    switch (c.kind) {
        case Kind::established:
        case Kind::established_r1:
            return env.established(c.family);
        case Kind::established_nat:
            return env.established_nat(c.family);
        case Kind::first_packet:
        case Kind::denied:
            break;
    }
    return env.first_packet(c.family);
}

BenchEnv* g_env = nullptr;
Options g_options;
bool g_failed = false;
// case name -> program -> ns/packet of each pass, in pass order: the mean
// over the pass's calls, and the interquartile mean of the calls' durations.
std::map<std::string, std::map<Program, std::vector<double>>> g_results;
std::map<std::string, std::map<Program, std::vector<double>>> g_iqm;

// Mean of the middle half (25th to 75th percentile) of the call durations.
// At repeat 1 a call's duration is one run read off a clock that ticks in
// ~10 ns steps here, and a call now and then is interrupted or preempted
// (tens of µs): the median would be quantised, the mean carries those calls.
double interquartile_mean(std::vector<uint32_t> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t lo = v.size() / 4, hi = v.size() - v.size() / 4;
    double sum = 0;
    for (size_t i = lo; i < hi; ++i) sum += v[i];
    return sum / static_cast<double>(hi - lo);
}

void fail(benchmark::State& state, const std::string& why) {
    g_failed = true;
    std::cerr << "sluice_xdp_cost: FAILED: " << why << std::endl;
    state.SkipWithError(why.c_str());
}

// Counters that say something other than "session hit, forwarded" happened:
// each of `want` off its expected count, and any drop or pass not in it.
std::string unexpected_counters(const std::map<int, int64_t>& delta, std::initializer_list<std::pair<int, int64_t>> want) {
    std::string problems;
    const auto& table = test::stat_table();
    for (auto [id, n] : want) {
        auto it = delta.find(id);
        int64_t got = it == delta.end() ? 0 : it->second;
        if (got != n)
            problems += std::string(" ") + table[static_cast<size_t>(id)].name + " +" + std::to_string(got) +
                        " (expected +" + std::to_string(n) + ")";
    }
    for (auto [id, n] : delta) {
        if (id >= static_cast<int>(table.size())) continue;
        if (std::any_of(want.begin(), want.end(), [id = id](const auto& w) { return w.first == id; })) continue;
        std::string kind = table[static_cast<size_t>(id)].kind;
        if (kind == "drop" || kind == "pass")
            problems += std::string(" ") + table[static_cast<size_t>(id)].name + " +" + std::to_string(n);
    }
    return problems;
}

void run_case(benchmark::State& state, Case c, Program program) {
    BenchEnv& env = *g_env;
    const bool established = c.kind != Kind::first_packet;
    const FlowFrames& flow = flow_of(env, c);
    const Bytes& frame = established ? flow.data : flow.syn;
    const int repeat = c.kind == Kind::established ? g_options.repeat : 1;
    test::XdpRunner runner(program == Program::sluice ? env.sluice_prog_fd() : env.baseline_prog_fd());
    const int stats_fd = env.map_fd(SLUICE_MAP_STATS);

    auto before = test::read_stats(stats_fd);
    if (!before) return fail(state, "reading stats: " + before.error().message);
    // The repeat-1 established rows also check what sluice made of the frame
    // (translated or not, checksums) on the first and the last call.
    const bool check_output = program == Program::sluice && repeat == 1 && established;
    const uint64_t last_call = static_cast<uint64_t>(state.max_iterations) - 1;
    uint64_t total_ns = 0, calls = 0;
    std::vector<uint32_t> durations;
    durations.reserve(static_cast<size_t>(state.max_iterations));
    for (auto _ : state) {
        if (!established && program == Program::sluice) env.delete_sessions(c.family, flow);
        auto r = runner.run(frame, env.lan_ifindex(), repeat);
        if (!r) return fail(state, c.name() + " " + program_name(program) + ": " + r.error().message);
        if (r->retval != XDP_REDIRECT)
            return fail(state, c.name() + " " + program_name(program) + ": verdict " +
                                   test::xdp_verdict_name(r->retval) + ", expected XDP_REDIRECT");
        state.SetIterationTime(static_cast<double>(r->duration_ns) * 1e-9);
        total_ns += r->duration_ns;
        durations.push_back(r->duration_ns);
        if (check_output && (calls == 0 || calls == last_call)) {
            if (std::string bad = env.check_output(c.family, flow, r->output); !bad.empty())
                return fail(state, c.name() + " sluice, call " + std::to_string(calls + 1) + ": " + bad);
        }
        ++calls;
    }
    auto after = test::read_stats(stats_fd);
    if (!after) return fail(state, "reading stats: " + after.error().message);
    auto delta = test::stat_delta(before.value(), after.value());

    // Each of the calls × repeat runs must have taken the path being measured.
    const int64_t runs = static_cast<int64_t>(calls) * repeat;
    std::string problems;
    if (program == Program::baseline) {
        if (!delta.empty()) problems = " the baseline run changed sluice's counters: " + test::describe_delta(delta);
    } else if (c.kind == Kind::established_nat) {
        // Every run translated in XDP: none left to tc_egress_prog, none passed.
        problems = unexpected_counters(
            delta,
            {{STAT_SESSION_HIT, runs}, {STAT_NAT_TRANSLATED, runs}, {STAT_NAT_DEFERRED_TC, 0}, {STAT_FORWARD, runs}});
        if (Status s = env.check_established(c.family, flow); !s) problems += " " + s.error().message;
    } else if (established) {
        problems =
            unexpected_counters(delta, {{STAT_SESSION_HIT, runs}, {STAT_NAT_TRANSLATED, 0}, {STAT_FORWARD, runs}});
        if (Status s = env.check_established(c.family, flow); !s) problems += " " + s.error().message;
    } else {
        problems =
            unexpected_counters(delta, {{STAT_SESSION_CREATED, runs}, {STAT_NAT_TRANSLATED, 0}, {STAT_FORWARD, runs}});
        if (!env.session_exists(c.family, flow)) problems += " no session after the SYN";
    }
    if (!problems.empty())
        return fail(state, c.name() + " " + program_name(program) + ": not the measured path:" + problems);

    double ns_per_packet = calls ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0;
    const double iqm = interquartile_mean(std::move(durations));
    state.counters["ns_per_pkt"] = ns_per_packet;
    state.counters["iqm_ns"] = iqm;
    state.counters["packets"] = static_cast<double>(runs);
    state.counters["frame_bytes"] = static_cast<double>(frame.size());
    g_results[c.name()][program].push_back(ns_per_packet);
    g_iqm[c.name()][program].push_back(iqm);
}

// --observability: the case's calls alternate between observability off and
// on every kPairedBlock calls (BenchEnv::set_observability between two calls,
// outside the measured runs), so a stretch of a slower machine (another
// process, the hypervisor) lands on both alike. Each half's calls give an
// interquartile mean; the pass's ratio is of those two.
constexpr int kPairedBlock = 20;

// --observability: case name ("tc_established_v4") -> each pass's
// interquartile means of its off and on halves, in pass order.
struct PairedResults {
    std::vector<double> plain, observed;
};
std::map<std::string, PairedResults> g_paired;
// Every paired run's numbers, for --json_out.
std::vector<nlohmann::json> g_paired_records;

void run_paired(benchmark::State& state, Case c, test::Hook hook, bool observed_first) {
    BenchEnv& env = *g_env;
    const bool established = c.kind == Kind::established;
    const FlowFrames& flow = flow_of(env, c);
    const Bytes& frame =
        c.kind == Kind::denied ? env.denied(c.family) : established ? flow.data : flow.syn;
    const int repeat = established ? g_options.repeat : 1;
    const int want_verdict = c.kind == Kind::denied ? XDP_DROP : XDP_REDIRECT;
    const bool tc = hook == test::Hook::tc;
    test::XdpRunner runner(tc ? env.sluice_tc_prog_fd() : env.sluice_prog_fd(), hook);
    const int stats_fd = env.map_fd(SLUICE_MAP_STATS);
    const std::string name = (tc ? "tc_" : "") + c.name();
    const std::string who = name + " paired";

    // Nothing left over from an earlier case.
    if (auto e = env.drain_flow_events(); !e) return fail(state, who + ": " + e.error().message);
    if (auto e = env.drain_captures(); !e) return fail(state, who + ": " + e.error().message);
    auto before = test::read_stats(stats_fd);
    if (!before) return fail(state, "reading stats: " + before.error().message);
    std::vector<uint32_t> durations[2];  // [0] plain, [1] observed
    for (auto& d : durations) d.reserve(static_cast<size_t>(state.max_iterations));
    uint64_t calls = 0;
    bool observed = !observed_first;  // flipped before the first call
    for (auto _ : state) {
        if (calls % kPairedBlock == 0) {
            observed = !observed;
            if (Status s = env.set_observability(observed); !s)
                return fail(state, who + ": observability: " + s.error().message);
        }
        if (c.kind == Kind::first_packet) env.delete_sessions(c.family, flow);
        auto r = runner.run(frame, env.lan_ifindex(), repeat);
        if (!r) return fail(state, who + ": " + r.error().message);
        if (!runner.same_verdict(r->retval, want_verdict))
            return fail(state, who + (observed ? " (observed)" : " (plain)") + ": verdict " +
                                   test::xdp_verdict_name(r->retval) + ", expected " +
                                   test::xdp_verdict_name(want_verdict));
        state.SetIterationTime(static_cast<double>(r->duration_ns) * 1e-9);
        durations[observed].push_back(r->duration_ns);
        ++calls;
    }
    if (Status s = env.set_observability(false); !s) return fail(state, who + ": observability: " + s.error().message);
    auto after = test::read_stats(stats_fd);
    if (!after) return fail(state, "reading stats: " + after.error().message);
    auto delta = test::stat_delta(before.value(), after.value());

    // Every run took the path measured, and observed logged (and captured)
    // each of its runs while plain wrote nothing.
    const int64_t runs = static_cast<int64_t>(calls) * repeat;
    const int64_t observed_runs = static_cast<int64_t>(durations[1].size()) * repeat;
    const int64_t logged = established ? 0 : observed_runs;
    std::string problems;
    if (established) {
        problems = unexpected_counters(
            delta, {{STAT_SESSION_HIT, runs}, {STAT_FORWARD, runs}, {STAT_NAT_TRANSLATED, 0}, {STAT_FLOW_LOG_EVENT, 0}});
        if (Status s = env.check_established(c.family, flow); !s) problems += " " + s.error().message;
    } else if (c.kind == Kind::denied) {
        problems = unexpected_counters(
            delta, {{STAT_SESSION_CREATED, 0}, {STAT_DROP_POLICY_DEFAULT, runs}, {STAT_FLOW_LOG_EVENT, logged}});
    } else {
        problems = unexpected_counters(
            delta, {{STAT_SESSION_CREATED, runs}, {STAT_FORWARD, runs}, {STAT_NAT_TRANSLATED, 0}, {STAT_FLOW_LOG_EVENT, logged}});
        if (!env.session_exists(c.family, flow)) problems += " no session after the SYN";
    }
    auto events = env.drain_flow_events();
    auto captures = env.drain_captures();
    if (!events) problems += " " + events.error().message;
    if (!captures) problems += " " + captures.error().message;
    if (events && captures) {
        auto expect = [&](const char* what, uint64_t got, int64_t want) {
            if (got != static_cast<uint64_t>(want))
                problems += std::string(" ") + what + " " + std::to_string(got) + " (expected " + std::to_string(want) + ")";
        };
        expect("open events read", events->open, c.kind == Kind::first_packet ? observed_runs : 0);
        expect("deny events read", events->deny, c.kind == Kind::denied ? observed_runs : 0);
        expect("other events read", events->close + events->other, 0);
        expect("capture records read", captures->records, c.kind == Kind::denied ? observed_runs : 0);
        expect("capture records lost", captures->lost, 0);
    }
    if (durations[0].empty() || durations[1].empty()) problems += " fewer calls than two blocks";
    if (!problems.empty()) return fail(state, who + ": not the measured path:" + problems);

    const double plain = interquartile_mean(std::move(durations[0]));
    const double with = interquartile_mean(std::move(durations[1]));
    state.counters["plain_iqm_ns"] = plain;
    state.counters["observed_iqm_ns"] = with;
    state.counters["packets"] = static_cast<double>(runs);
    PairedResults& results = g_paired[name];
    results.plain.push_back(plain);
    results.observed.push_back(with);
    std::string kind = kind_name(c.kind);
    kind.pop_back();  // "established_" -> "established"
    g_paired_records.push_back({{"case", name},
                                {"kind", kind},
                                {"family", family_name(c.family)},
                                {"hook", test::hook_name(hook)},
                                {"pass", results.plain.size()},
                                {"frame_bytes", frame.size()},
                                {"calls", calls},
                                {"repeat", repeat},
                                {"block_calls", kPairedBlock},
                                {"plain_ns_per_packet", plain},
                                {"observed_ns_per_packet", with},
                                {"observed_runs", observed_runs},
                                {"flow_events_read", events->total()},
                                {"capture_records_read", captures->records}});
}

int calls_of(Kind k) {
    switch (k) {
        case Kind::established:
            return g_options.calls;
        case Kind::established_r1:
        case Kind::established_nat:
            return g_options.nat_calls;
        case Kind::first_packet:
        case Kind::denied:
            break;
    }
    return g_options.first_calls;
}

void register_case(const Case& c, Program p, int pass) {
    std::string name = c.name() + "/" + program_name(p) + "/pass:" + std::to_string(pass + 1);
    benchmark::RegisterBenchmark(name.c_str(), [c, p](benchmark::State& s) { run_case(s, c, p); })
        ->Iterations(calls_of(c.kind))
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
}

// --observability: one benchmark per case, build and pass, the paired run
// above; the XDP build (native XDP on a NIC) and the TC build (the `tc`
// mode) of every case in every pass.
void register_observability_benchmarks() {
    for (int pass = 0; pass < g_options.passes; ++pass)
        for (test::Hook hook : {test::Hook::xdp, test::Hook::tc})
            for (Kind k : {Kind::established, Kind::first_packet, Kind::denied})
                for (Family f : {Family::v4, Family::v6}) {
                    const Case c{k, f};
                    const bool observed_first = pass % 2;
                    std::string name = std::string(hook == test::Hook::tc ? "tc_" : "") + c.name() +
                                       "/paired/pass:" + std::to_string(pass + 1);
                    benchmark::RegisterBenchmark(name.c_str(),
                                                 [c, hook, observed_first](benchmark::State& s) {
                                                     run_paired(s, c, hook, observed_first);
                                                 })
                        ->Iterations(calls_of(k))
                        ->UseManualTime()
                        ->Unit(benchmark::kNanosecond);
                }
}

void register_benchmarks() {
    if (g_options.observability) return register_observability_benchmarks();
    for (int pass = 0; pass < g_options.passes; ++pass) {
        // Alternate which program, and which of the NAT / no-NAT pair, goes
        // first so drift does not favour one.
        const bool odd = pass % 2;
        std::vector<Case> cases;
        for (Family f : {Family::v4, Family::v6}) cases.push_back({Kind::established, f});
        for (Family f : {Family::v4, Family::v6}) {
            cases.push_back({odd ? Kind::established_nat : Kind::established_r1, f});
            cases.push_back({odd ? Kind::established_r1 : Kind::established_nat, f});
        }
        for (Family f : {Family::v4, Family::v6}) cases.push_back({Kind::first_packet, f});
        for (const Case& c : cases) {
            Program order[2] = {Program::sluice, Program::baseline};
            if (odd) std::swap(order[0], order[1]);
            for (Program p : order) register_case(c, p, pass);
        }
    }
}

struct Spread {
    double median = 0, min = 0, max = 0;
    size_t n = 0;
};

Spread spread(std::vector<double> v) {
    Spread s;
    s.n = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.max = v.back();
    s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return s;
}

std::string fmt(const Spread& s, int decimals) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.*f (%.*f–%.*f)", decimals, s.median, decimals, s.min, decimals, s.max);
    return buf;
}

// Per pass a[i] / b[i], for the passes both have.
std::vector<double> ratios(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> out;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if (b[i] > 0) out.push_back(a[i] / b[i]);
    return out;
}

std::vector<double> differences(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> out;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) out.push_back(a[i] - b[i]);
    return out;
}

// --observability: observed / plain per case, from the same passes.
std::string observability_summary_markdown() {
    std::ostringstream out;
    const BenchEnv& env = *g_env;
    out << "Observability in the datapath, both builds of the pipeline (XDP: xdp_main_prog, what a NIC runs "
           "natively; TC: tc_main_prog, the `tc` mode, what `auto` picks on veth): the same programs with flow logging (open, close, deny; every policy "
           "and the default; no rate limit) and drop capture (every drop, read as `sluice capture` reads it) on "
           "(\"observed\") and off (\"plain\") on the same datapath, maps and sessions, switched every "
        << kPairedBlock
        << " calls within a case; BPF_PROG_TEST_RUN duration, ns/packet as the interquartile mean of each half's "
           "calls in a pass (a call interrupted or preempted falls outside it), median (min–max) over "
        << g_options.passes << " passes\n\n";
    out << "| case | frame | plain ns/pkt | observed ns/pkt | plain / observed (goal ≥ 0.97 established) | "
           "observed − plain, ns |\n";
    out << "|---|---|---|---|---|---|\n";
    struct Row {
        std::string key, label, frame;
    };
    auto bytes = [](const Bytes& frame) { return std::to_string(frame.size()) + " B, "; };
    const std::string est = std::to_string(g_options.calls) + " calls × repeat " + std::to_string(g_options.repeat);
    const std::string single = std::to_string(g_options.first_calls) + " calls × repeat 1";
    const Row rows[] = {
        {"established_v4", "established TCP, IPv4", bytes(env.established(Family::v4).data) + est},
        {"established_v6", "established TCP, IPv6", bytes(env.established(Family::v6).data) + est},
        {"first_packet_v4", "first packet (SYN: session opened; observed: open event), IPv4",
         bytes(env.first_packet(Family::v4).syn) + single},
        {"first_packet_v6", "first packet (SYN: session opened; observed: open event), IPv6",
         bytes(env.first_packet(Family::v6).syn) + single},
        {"denied_v4", "denied SYN (default deny; observed: deny event + capture record), IPv4",
         bytes(env.denied(Family::v4)) + single},
        {"denied_v6", "denied SYN (default deny; observed: deny event + capture record), IPv6",
         bytes(env.denied(Family::v6)) + single},
    };
    for (const char* build : {"", "tc_"})
        for (const Row& row : rows) {
            auto it = g_paired.find(build + row.key);
            if (it == g_paired.end()) continue;
            const auto& plain = it->second.plain;
            const auto& observed = it->second.observed;
            out << "| " << (*build ? "TC build: " : "XDP build: ") << row.label << " | " << row.frame << " | "
                << fmt(spread(plain), 1) << " | " << fmt(spread(observed), 1) << " | "
                << fmt(spread(ratios(plain, observed)), 3) << " | " << fmt(spread(differences(observed, plain)), 1)
                << " |\n";
        }
    out << "\nPer pass, of the same pass: plain / observed (1.00 = the same cost; below 1, observability costs) "
           "and observed − plain; median (min–max) of those. Checked per case: the verdict of every call, the "
           "counters (session-hit = forward = runs on an established flow, flow-log-event 0 there; "
           "session-created or drop-policy-default = runs otherwise, flow-log-event = runs observed, 0 plain), "
           "the session still ESTABLISHED, and the observed datapath's ring and perf buffer read back: exactly "
           "one open event per first packet, one deny event and one capture record per denied SYN, nothing "
           "for an established packet, none lost.\n";
    return out.str();
}

std::string summary_markdown() {
    if (g_options.observability) return observability_summary_markdown();
    std::ostringstream out;
    out << "Per-packet cost: BPF_PROG_TEST_RUN duration, ns/packet, median (min–max) over "
        << g_options.passes << " interleaved passes\n\n";
    out << "| case | frame | sluice ns/pkt | baseline ns/pkt | sluice / baseline |\n";
    out << "|---|---|---|---|---|\n";
    struct Row {
        std::string key, label, frame;
    };
    const std::string est = std::to_string(g_options.calls) + " calls × repeat " + std::to_string(g_options.repeat);
    const std::string first = std::to_string(g_options.first_calls) + " calls × repeat 1";
    const std::string single = std::to_string(g_options.nat_calls) + " calls × repeat 1";
    auto bytes = [](const Bytes& frame) { return std::to_string(frame.size()) + " B, "; };
    const BenchEnv& env = *g_env;
    const Row rows[] = {
        {"established_v4", "established TCP, IPv4", bytes(env.established(Family::v4).data) + est},
        {"established_v6", "established TCP, IPv6", bytes(env.established(Family::v6).data) + est},
        {"first_packet_v4", "first packet (SYN: policy + session create), IPv4",
         bytes(env.first_packet(Family::v4).syn) + first},
        {"first_packet_v6", "first packet (SYN: policy + session create), IPv6",
         bytes(env.first_packet(Family::v6).syn) + first},
    };
    for (const Row& row : rows) {
        auto it = g_results.find(row.key);
        if (it == g_results.end()) continue;
        const auto& sl = it->second[Program::sluice];
        const auto& bl = it->second[Program::baseline];
        out << "| " << row.label << " | " << row.frame << " | " << fmt(spread(sl), 1) << " | " << fmt(spread(bl), 1)
            << " | " << fmt(spread(ratios(sl, bl)), 2) << " |\n";
    }
    out << "\nRatio: per pass, sluice / baseline of the same pass; median (min–max) of those.\n"
           "baseline = bpf/baseline_redirect.bpf.c (MAC swap + devmap redirect), same frame, same repeat.\n";

    // Source NAT against the same established flow without it (repeat 1).
    bool nat_header = false;
    std::string mean_ratios;
    for (Family f : {Family::v4, Family::v6}) {
        const std::string plain_key = std::string("established_r1_") + family_name(f);
        const std::string nat_key = std::string("established_nat_") + family_name(f);
        if (!g_iqm.count(plain_key) || !g_iqm.count(nat_key)) continue;
        if (!nat_header) {
            out << "\nSource NAT (`translate: interface`) on an established TCP flow vs the same flow without NAT: "
                   "ns/packet as the interquartile mean of the calls' durations in a pass, "
                << single << ", " << env.established(f).data.size() << " B frames, median (min–max) over "
                << g_options.passes << " interleaved passes\n\n";
            out << "| family | no NAT ns/pkt | source NAT ns/pkt | baseline ns/pkt | NAT − no NAT, ns | NAT / no NAT | "
                   "no NAT / baseline | NAT / baseline |\n";
            out << "|---|---|---|---|---|---|---|---|\n";
            nat_header = true;
        }
        auto& plain = g_iqm[plain_key];
        auto& nat = g_iqm[nat_key];
        const auto& p_sl = plain[Program::sluice];
        const auto& n_sl = nat[Program::sluice];
        out << "| " << (f == Family::v4 ? "IPv4" : "IPv6") << " | " << fmt(spread(p_sl), 1) << " | "
            << fmt(spread(n_sl), 1) << " | " << fmt(spread(plain[Program::baseline]), 1) << " | "
            << fmt(spread(differences(n_sl, p_sl)), 1) << " | " << fmt(spread(ratios(n_sl, p_sl)), 2) << " | "
            << fmt(spread(ratios(p_sl, plain[Program::baseline])), 2) << " | "
            << fmt(spread(ratios(n_sl, nat[Program::baseline])), 2) << " |\n";
        auto& plain_mean = g_results[plain_key][Program::sluice];
        auto& nat_mean = g_results[nat_key][Program::sluice];
        mean_ratios += std::string(mean_ratios.empty() ? "" : ", ") + (f == Family::v4 ? "IPv4 " : "IPv6 ") +
                       fmt(spread(ratios(nat_mean, plain_mean)), 2) + " (NAT − no NAT " +
                       fmt(spread(differences(nat_mean, plain_mean)), 1) + " ns)";
    }
    if (nat_header)
        out << "\nPer pass, of the same pass: NAT − no NAT, NAT / no NAT, each / the baseline on its own frame "
               "(baseline column: on the no-NAT frame); median (min–max) of those. Both flows go LAN host → wan0 "
               "with the same route, frame size and policy; only the NAT one matches a nat.source rule, so its "
               "chain adds xdp_nat_prog (address + port + checksum rewrite). Repeat 1 because a rerun on the "
               "rewritten buffer would no longer match the session. Checked per pass: nat-translated = runs "
               "(NAT) or 0 (no NAT), session-hit = forward = runs, no pass/drop, and the first and last output "
               "frame carry the expected source (wan0's address and the reserved port, or the LAN host) with "
               "valid checksums.\nWith per-pass means of all calls instead (interrupted calls included), "
               "NAT / no NAT: "
            << mean_ratios << ".\n";
    return out.str();
}

bool take_flag(const char* arg, const char* name, std::string* value) {
    size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
    *value = arg + n + 1;
    return true;
}

// Removes our flags from argv (Google Benchmark gets the rest).
bool parse_options(int* argc, char** argv) {
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        std::string v;
        try {
            if (take_flag(argv[i], "--passes", &v)) g_options.passes = std::stoi(v);
            else if (take_flag(argv[i], "--calls", &v)) g_options.calls = std::stoi(v);
            else if (take_flag(argv[i], "--repeat", &v)) g_options.repeat = std::stoi(v);
            else if (take_flag(argv[i], "--first_calls", &v)) g_options.first_calls = std::stoi(v);
            else if (take_flag(argv[i], "--nat_calls", &v))
                g_options.nat_calls = std::stoi(v);
            else if (take_flag(argv[i], "--summary_out", &v)) g_options.summary_out = v;
            else if (take_flag(argv[i], "--json_out", &v)) g_options.json_out = v;
            else if (std::strcmp(argv[i], "--observability") == 0) g_options.observability = true;
            else argv[out++] = argv[i];
        } catch (const std::exception&) {
            std::cerr << "sluice_xdp_cost: bad value in " << argv[i] << "\n";
            return false;
        }
    }
    *argc = out;
    argv[out] = nullptr;
    if (g_options.passes < 1 || g_options.calls < 1 || g_options.first_calls < 1 || g_options.nat_calls < 1 ||
        g_options.repeat < 1 || g_options.repeat > kMaxRepeatPerCall) {
        std::cerr << "sluice_xdp_cost: --passes, --calls, --first_calls, --nat_calls must be ≥ 1 and --repeat in 1.."
                  << kMaxRepeatPerCall << " (each run decrements the frame's TTL in place)\n";
        return false;
    }
    return true;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
    using namespace sluice::bench;
    if (!parse_options(&argc, argv)) return 2;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

    auto env = BenchEnv::create(g_options.observability);
    if (!env) {
        std::cerr << "sluice_xdp_cost: cannot set up: " << env.error().message << "\n";
        return 1;
    }
    g_env = env.value().get();
    register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();

    const std::string summary = summary_markdown();
    std::cout << "\n" << summary << std::flush;
    if (!g_options.summary_out.empty()) {
        std::ofstream f(g_options.summary_out);
        f << summary;
        if (!f) {
            std::cerr << "sluice_xdp_cost: cannot write " << g_options.summary_out << "\n";
            return 1;
        }
    }
    if (!g_options.json_out.empty()) {
        std::ofstream f(g_options.json_out);
        for (const auto& record : g_paired_records) f << record.dump() << "\n";
        if (!f) {
            std::cerr << "sluice_xdp_cost: cannot write " << g_options.json_out << "\n";
            return 1;
        }
    }
    g_env = nullptr;
    env.value().reset();
    if (g_failed) {
        std::cerr << "sluice_xdp_cost: some measurements failed (see above); their numbers are not valid\n";
        return 1;
    }
    return 0;
}
