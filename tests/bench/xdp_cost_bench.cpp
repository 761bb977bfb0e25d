// sluice_bench: the per-packet cost of the XDP pipeline, as a ratio to the
// least an XDP forwarder can do (bpf/baseline_redirect.bpf.c), both measured
// with BPF_PROG_TEST_RUN in the same run.
//
// Time is the kernel's own per-run duration (bpfilter's way), reported to
// Google Benchmark as manual time, so each benchmark's "Time" column is
// ns/packet. Programs are interleaved: every pass runs sluice and the baseline
// back to back (alternating which goes first), and the summary at the end
// gives median and min–max over passes plus the sluice/baseline ratio.
//
//   sluice_bench [--passes=5] [--calls=200] [--repeat=200] [--first_calls=2000]
//                [--summary_out=FILE] [Google Benchmark flags]
//
// Needs root (namespaces, BPF). kernel.bpf_stats_enabled must be 0.
#include <benchmark/benchmark.h>
#include <linux/bpf.h>

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
    std::string summary_out;  // markdown copy of the summary
};

enum class Program { sluice, baseline };
const char* program_name(Program p) { return p == Program::sluice ? "sluice" : "baseline"; }

enum class Kind { established, first_packet };

struct Case {
    Kind kind;
    Family family;
    std::string name() const {
        return std::string(kind == Kind::established ? "established_" : "first_packet_") + family_name(family);
    }
};

BenchEnv* g_env = nullptr;
Options g_options;
bool g_failed = false;
// case name -> program -> ns/packet of each pass, in pass order.
std::map<std::string, std::map<Program, std::vector<double>>> g_results;

void fail(benchmark::State& state, const std::string& why) {
    g_failed = true;
    std::cerr << "sluice_bench: FAILED: " << why << std::endl;
    state.SkipWithError(why.c_str());
}

// Counters that say something other than "session hit, forwarded" happened.
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
        std::string kind = table[static_cast<size_t>(id)].kind;
        if (kind == "drop" || kind == "pass")
            problems += std::string(" ") + table[static_cast<size_t>(id)].name + " +" + std::to_string(n);
    }
    return problems;
}

void run_case(benchmark::State& state, Case c, Program program) {
    BenchEnv& env = *g_env;
    const bool established = c.kind == Kind::established;
    const FlowFrames& flow = established ? env.established(c.family) : env.first_packet(c.family);
    const Bytes& frame = established ? flow.data : flow.syn;
    const int repeat = established ? g_options.repeat : 1;
    test::XdpRunner runner(program == Program::sluice ? env.sluice_prog_fd() : env.baseline_prog_fd());
    const int stats_fd = env.map_fd(SLUICE_MAP_STATS);

    auto before = test::read_stats(stats_fd);
    if (!before) return fail(state, "reading stats: " + before.error().message);
    uint64_t total_ns = 0, calls = 0;
    for (auto _ : state) {
        if (!established && program == Program::sluice) env.delete_sessions(c.family, flow);
        auto r = runner.run(frame, env.lan_ifindex(), repeat);
        if (!r) return fail(state, c.name() + " " + program_name(program) + ": " + r.error().message);
        if (r->retval != XDP_REDIRECT)
            return fail(state, c.name() + " " + program_name(program) + ": verdict " +
                                   test::xdp_verdict_name(r->retval) + ", expected XDP_REDIRECT");
        state.SetIterationTime(static_cast<double>(r->duration_ns) * 1e-9);
        total_ns += r->duration_ns;
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
    } else if (established) {
        problems = unexpected_counters(delta, {{STAT_SESSION_HIT, runs}, {STAT_FORWARD, runs}});
        if (Status s = env.check_established(c.family); !s) problems += " " + s.error().message;
    } else {
        problems = unexpected_counters(delta, {{STAT_SESSION_CREATED, runs}, {STAT_FORWARD, runs}});
        if (!env.session_exists(c.family, flow)) problems += " no session after the SYN";
    }
    if (!problems.empty())
        return fail(state, c.name() + " " + program_name(program) + ": not the measured path:" + problems);

    double ns_per_packet = calls ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0;
    state.counters["ns_per_pkt"] = ns_per_packet;
    state.counters["packets"] = static_cast<double>(runs);
    state.counters["frame_bytes"] = static_cast<double>(frame.size());
    g_results[c.name()][program].push_back(ns_per_packet);
}

void register_benchmarks() {
    const Case cases[] = {{Kind::established, Family::v4},
                          {Kind::established, Family::v6},
                          {Kind::first_packet, Family::v4},
                          {Kind::first_packet, Family::v6}};
    for (int pass = 0; pass < g_options.passes; ++pass) {
        for (const Case& c : cases) {
            // Alternate which program goes first so drift does not favour one.
            Program order[2] = {Program::sluice, Program::baseline};
            if (pass % 2) std::swap(order[0], order[1]);
            for (Program p : order) {
                std::string name = c.name() + "/" + program_name(p) + "/pass:" + std::to_string(pass + 1);
                benchmark::RegisterBenchmark(name.c_str(), [c, p](benchmark::State& s) { run_case(s, c, p); })
                    ->Iterations(c.kind == Kind::established ? g_options.calls : g_options.first_calls)
                    ->UseManualTime()
                    ->Unit(benchmark::kNanosecond);
            }
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

std::string summary_markdown() {
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
        std::vector<double> ratios;
        for (size_t i = 0; i < std::min(sl.size(), bl.size()); ++i)
            if (bl[i] > 0) ratios.push_back(sl[i] / bl[i]);
        out << "| " << row.label << " | " << row.frame << " | " << fmt(spread(sl), 1) << " | "
            << fmt(spread(bl), 1) << " | " << fmt(spread(ratios), 2) << " |\n";
    }
    out << "\nRatio: per pass, sluice / baseline of the same pass; median (min–max) of those.\n"
           "baseline = bpf/baseline_redirect.bpf.c (MAC swap + devmap redirect), same frame, same repeat.\n";
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
            else if (take_flag(argv[i], "--summary_out", &v)) g_options.summary_out = v;
            else argv[out++] = argv[i];
        } catch (const std::exception&) {
            std::cerr << "sluice_bench: bad value in " << argv[i] << "\n";
            return false;
        }
    }
    *argc = out;
    argv[out] = nullptr;
    if (g_options.passes < 1 || g_options.calls < 1 || g_options.first_calls < 1 || g_options.repeat < 1 ||
        g_options.repeat > kMaxRepeatPerCall) {
        std::cerr << "sluice_bench: --passes, --calls, --first_calls must be ≥ 1 and --repeat in 1.."
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

    auto env = BenchEnv::create();
    if (!env) {
        std::cerr << "sluice_bench: cannot set up: " << env.error().message << "\n";
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
            std::cerr << "sluice_bench: cannot write " << g_options.summary_out << "\n";
            return 1;
        }
    }
    g_env = nullptr;
    env.value().reset();
    if (g_failed) {
        std::cerr << "sluice_bench: some measurements failed (see above); their numbers are not valid\n";
        return 1;
    }
    return 0;
}
