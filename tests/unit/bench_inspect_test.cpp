// `sluice bench inspect`'s pure logic (userspace/bench/inspect_*): the
// rulesets it generates (the same draw as the former Python generator), the
// checks that a run took the path it is named after, and the report and
// chart rendered from synthetic records.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "bench/inspect_canary.h"
#include "bench/inspect_path.h"
#include "bench/inspect_patterns.h"
#include "bench/inspect_report.h"
#include "config/load_config.h"
#include "inspect/ruleset_db.h"

using namespace sluice::bench;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

// ------------------------------------------------------------------ patterns

TEST(BenchInspectPatterns, TheDrawIsPythonsMersenneTwister) {
    // random.Random(20261130).getrandbits(32), three times (CPython 3.11).
    PyRandom r(kInspectPatternSeed);
    EXPECT_EQ(r.next_u32(), 3267388414u);
    EXPECT_EQ(r.next_u32(), 597617956u);
    EXPECT_EQ(r.next_u32(), 2508523437u);
    // r = random.Random(20261130); r.randint(5, 9), r.choice(CONSONANTS), r.randrange(256)
    PyRandom s(kInspectPatternSeed);
    EXPECT_EQ(s.randint(5, 9), 6);
    EXPECT_EQ(s.choice("bcdfghjklmnpqrstvwxz"), 'x');
    EXPECT_EQ(s.below(256), 29u);
}

TEST(BenchInspectPatterns, SameRulesetsAsThePythonGenerator) {
    // scripts/lib/inspect_patterns.py 10 sluice-bench-canary-n0010, before the port.
    auto p = inspect_patterns(10, canary_text(10));
    ASSERT_EQ(p.size(), 10u);
    EXPECT_EQ(p[0], "- { name: canary, regex: 'sluice-bench-canary-n0010', direction: both, action: alert }");
    EXPECT_EQ(p[1], "- { name: p0001, regex: 'xanima[_-]majaki=[0-9a-f]{8,32}', direction: both, action: reject }");
    EXPECT_EQ(p[2],
              "- { name: p0002, regex: 'flag\\{laxuxuba[A-Za-z0-9_]{4,32}\\}', direction: both, action: reject }");
    EXPECT_EQ(p[3],
              "- { name: p0003, regex: '/(?:qijede|palumi)/gazisunem\\.(?:php|cgi|jsp)\\?pawow=', direction: both, "
              "action: reject }");
    EXPECT_EQ(p[4],
              "- { name: p0004, regex: '\\x67\\xd4\\x5d\\x4c\\x34\\xd5\\x76\\x27', direction: both, action: reject }");
    EXPECT_EQ(p[5],
              "- { name: p0005, regex: 'dotug:\\s*[0-9]{3,5}\\s+jusijav', direction: both, action: reject, caseless: "
              "true }");
    EXPECT_EQ(p[6],
              "- { name: p0006, regex: '(?:select|union)\\s+jecegik\\s+from\\s+bolalet', direction: both, action: "
              "reject, caseless: true }");
    EXPECT_EQ(p[7],
              "- { name: p0007, regex: 'sosopoqa(?:\\.wirowono){1,3}@boximowun\\.(?:com|net|org)', direction: both, "
              "action: reject }");
    EXPECT_EQ(p[8], "- { name: p0008, regex: '[a-z]{4}[0-9]{2}tivep[A-Z]{3}', direction: both, action: reject }");
    auto big = inspect_patterns(1000, "c");
    ASSERT_EQ(big.size(), 1000u);
    EXPECT_EQ(big[499],
              "- { name: p0499, regex: '/(?:nupul|cewuzomig)/kativem\\.(?:php|cgi|jsp)\\?nanakeho=', direction: "
              "both, action: reject }");
    EXPECT_EQ(big[999],
              "- { name: p0999, regex: 'feqaba(?:\\.hivovi){1,3}@voqoneta\\.(?:com|net|org)', direction: both, "
              "action: reject }");
}

TEST(BenchInspectPatterns, ALargerCountExtendsASmallerOneAndDirectionChangesOnlyDirection) {
    auto small = inspect_patterns(50, "c");
    auto big = inspect_patterns(1000, "c");
    EXPECT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
    auto c2s = inspect_patterns(50, "c", "client-to-server");
    ASSERT_EQ(c2s.size(), small.size());
    for (size_t i = 0; i < small.size(); ++i) {
        std::string s = small[i];
        s.replace(s.find("direction: both"), 15, "direction: client-to-server");
        EXPECT_EQ(c2s[i], s);
    }
    EXPECT_TRUE(inspect_patterns(0, "c").empty());
    EXPECT_EQ(inspect_patterns(1, "c").size(), 1u);
    EXPECT_EQ(canary_text(7), "sluice-bench-canary-n0007");
}

TEST(BenchInspectPatterns, TheConfigsAreValidAndCompile) {
    for (bool handoff : {true, false}) {
        auto loaded = sluice::config::parse_config(inspect_bench_config(100, handoff), "bench.yaml");
        ASSERT_TRUE(loaded.ok()) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics.front().message);
        const auto& c = *loaded.config;
        const auto* bench = c.find_ruleset("bench");
        ASSERT_NE(bench, nullptr);
        EXPECT_EQ(bench->patterns.size(), 100u);
        EXPECT_EQ(bench->patterns[0].regex, "sluice-bench-canary-n0100");
        EXPECT_FALSE(bench->inspect_bytes);
        const auto* h = c.find_ruleset("bench-handoff");
        if (handoff) {
            ASSERT_NE(h, nullptr);
            EXPECT_EQ(h->inspect_bytes, std::optional<uint64_t>(kHandoffBytes));
            ASSERT_EQ(h->patterns.size(), 100u);
            for (const auto& p : h->patterns)
                EXPECT_EQ(p.direction, sluice::config::PatternDirection::client_to_server);
        } else {
            EXPECT_EQ(h, nullptr);  // (b)'s configs compile only `bench`
        }
        std::vector<sluice::config::Diagnostic> problems;
        auto compiled = sluice::inspect::compile_rulesets(c, problems);
        EXPECT_TRUE(compiled) << (problems.empty() ? "" : problems.front().message);
    }
}

TEST(BenchInspectCanary, TheRequestCarriesTheCanaryAndIsLongEnoughForAnAnswer) {
    std::string r = canary_request(canary_text(10));
    EXPECT_EQ(r.size(), 122u);  // > the 80 bytes sluice_connrate's server waits for
    EXPECT_EQ(r.rfind("GET /?q=sluice-bench-canary-n0010 HTTP/1.1\r\nHost: wan-host\r\nxx", 0), 0u);
    EXPECT_EQ(r.substr(118), "xx\r\n");
}

// ------------------------------------------------------------------ path checks

namespace {

// A `show inspect --json` document with the rulesets bench and bench-handoff.
json show_inspect(uint64_t bench_conns, uint64_t bench_c2s, uint64_t handoff_conns, uint64_t handoff_c2s,
                  uint64_t handoffs = 0, uint64_t canary = 0, bool overloaded = false) {
    auto ruleset = [](const std::string& name, uint64_t conns, uint64_t c2s, uint64_t ho, uint64_t canary_matches) {
        return json{{"name", name},
                    {"id", 1},
                    {"fail_mode", "closed"},
                    {"inspect_bytes", "unlimited"},
                    {"fast_path",
                     {{"punted_packets", 100}, {"punted_bytes", 1000}, {"fail_open_packets", 0},
                      {"fail_closed_packets", 0}, {"no_socket_packets", 0}, {"verdict_drop_packets", 0}}},
                    {"stage",
                     {{"connections", conns}, {"bytes_client_to_server", c2s}, {"bytes_server_to_client", 700},
                      {"matches", 0}, {"resets", 0}, {"drops", 0}, {"alerts", 0}, {"offloaded", 0},
                      {"stage_errors", 0}, {"handoffs", ho}, {"handoff_refused", 0}}},
                    {"patterns", json::array({{{"name", "canary"}, {"regex", "x"}, {"matches", canary_matches}},
                                              {{"name", "p0001"}, {"regex", "y"}, {"matches", 0}}})}};
    };
    return json{{"stage", {{"running", true}, {"overloaded", overloaded}, {"workers", 2}}},
                {"rulesets", json::array({ruleset("bench", bench_conns, bench_c2s, 0, canary),
                                          ruleset("bench-handoff", handoff_conns, handoff_c2s, handoffs, 0)})}};
}

PathSnapshot snap(const Counters& stats, const json& inspect) {
    auto flat = flatten_inspect(inspect);
    EXPECT_TRUE(flat) << flat.error().message;
    return {stats, flat ? *flat : InspectCounters{}};
}

bool has_problem(const PathCheck& c, const std::string& part) {
    return std::any_of(c.problems.begin(), c.problems.end(), [&](const std::string& p) { return contains(p, part); });
}

const Counters kStatsBefore{{"rx", 1000}, {"forward", 10}, {"pass-to-kernel", 5}, {"punt-to-inspection", 50},
                            {"tc-punt-socket-assigned", 50}, {"drop-session-table-full", 0},
                            {"tcp-spliced-after-inspection", 0}};

}  // namespace

TEST(BenchInspectPath, ShowInspectIsFlattened) {
    auto flat = flatten_inspect(show_inspect(3, 4096, 0, 0, 0, 2, true));
    ASSERT_TRUE(flat) << flat.error().message;
    EXPECT_TRUE(flat->overloaded);
    ASSERT_EQ(flat->rulesets.size(), 2u);
    const auto& b = flat->rulesets.at("bench");
    EXPECT_EQ(b.counters.at("connections"), 3u);
    EXPECT_EQ(b.counters.at("bytes_client_to_server"), 4096u);
    EXPECT_EQ(b.counters.at("fp_punted_packets"), 100u);
    EXPECT_EQ(b.counters.count("fp_fail_open_packets"), 1u);
    EXPECT_EQ(b.counters.count("name"), 0u);  // strings are not counters
    EXPECT_EQ(pattern_matches(*flat, "bench", "canary"), 2u);
    EXPECT_EQ(pattern_matches(*flat, "bench", "nope"), 0u);
    EXPECT_EQ(pattern_matches(*flat, "other", "canary"), 0u);
    EXPECT_FALSE(flatten_inspect(json{{"rulesets", json::array()}}));
    EXPECT_FALSE(flatten_inspect(json::array()));
}

TEST(BenchInspectPath, AnInspectedRunThatScannedEverythingPasses) {
    auto before = snap(kStatsBefore, show_inspect(1, 100, 0, 0));
    Counters after_stats = kStatsBefore;
    after_stats["rx"] += 120890;
    after_stats["punt-to-inspection"] += 120888;
    after_stats["tc-punt-socket-assigned"] += 120888;
    after_stats["pass-to-kernel"] += 2;
    after_stats["drop-punt-no-socket"] = 1;
    auto after = snap(after_stats, show_inspect(6, 100 + 5000000, 0, 0));
    auto c = check_path({.mode = "inspect", .received = 4999000, .connections = 5, .streams = 4}, before, after);
    EXPECT_TRUE(c.ok()) << c.problem_text();
    EXPECT_EQ(c.summary,
              "rx=120890 xdp_redirect=0 passed=2 punted=120888 punt-socket-assigned=120888 dropped=1 "
              "drop-punt-no-socket=1 stage: connections=5 scanned_c2s=5000000 scanned_s2c=0");
    EXPECT_EQ(c.stage.at("connections"), 5u);
}

TEST(BenchInspectPath, AnInspectedRunFailsWhenItWasNotInspected) {
    auto before = snap(kStatsBefore, show_inspect(0, 0, 0, 0));
    // Nothing punted, too few connections, fewer bytes scanned than received.
    auto c = check_path({.mode = "inspect", .received = 5000, .connections = 5, .streams = 4}, before,
                        snap(kStatsBefore, show_inspect(2, 4000, 0, 0)));
    EXPECT_FALSE(c.ok());
    EXPECT_TRUE(has_problem(c, "the fast path punted nothing"));
    EXPECT_TRUE(has_problem(c, "the stage accepted 2 connections, expected at least 5"));
    EXPECT_TRUE(has_problem(c, "the stage scanned 4000 bytes client-to-server, the server received 5000"));

    // The other ruleset saw the traffic; the stage was overloaded; a match.
    Counters moved = kStatsBefore;
    moved["punt-to-inspection"] += 10;
    json doc = show_inspect(5, 6000, 3, 10, 0, 0, true);
    doc["rulesets"][0]["stage"]["matches"] = 1;
    doc["rulesets"][0]["stage"]["handoffs"] = 2;
    doc["rulesets"][0]["fast_path"]["fail_open_packets"] = 7;
    auto d = check_path({.mode = "inspect", .received = 5000, .connections = 5, .streams = 4}, before,
                        snap(moved, doc));
    EXPECT_FALSE(d.ok());
    EXPECT_TRUE(has_problem(d, "ruleset bench-handoff saw 3 connections on the inspect path"));
    EXPECT_TRUE(has_problem(d, "the stage reported itself overloaded"));
    EXPECT_TRUE(has_problem(d, "matches = 1"));
    EXPECT_TRUE(has_problem(d, "handoffs = 2"));  // a hand-off is not the inspected path
    EXPECT_TRUE(has_problem(d, "fp_fail_open_packets = 7"));
    EXPECT_FALSE(has_problem(d, "punted nothing"));
}

TEST(BenchInspectPath, AHandOffNeedsEveryStreamHandedBackAndSpliced) {
    auto before = snap(kStatsBefore, show_inspect(0, 0, 0, 0));
    Counters after_stats = kStatsBefore;
    after_stats["rx"] += 434575;
    after_stats["forward"] += 261779;
    after_stats["punt-to-inspection"] += 112;
    after_stats["tcp-spliced-after-inspection"] += 434455;
    after_stats["drop-inspect-handoff-hold"] = 8;
    auto good = check_path({.mode = "handoff", .received = 1000000000, .connections = 5, .streams = 4}, before,
                           snap(after_stats, show_inspect(0, 0, 5, 409439, 4)));
    EXPECT_TRUE(good.ok()) << good.problem_text();
    EXPECT_TRUE(contains(good.summary, "scanned_c2s=409439 (0.04% of received) scanned_s2c=0"));
    EXPECT_TRUE(contains(good.summary, "handoffs=4 handoff_refused=0 tcp-spliced-after-inspection=434455"));
    EXPECT_TRUE(contains(good.summary, "dropped=8 drop-inspect-handoff-hold=8 stage:"));

    // Three of four streams handed off, one refused, too little scanned, no splice.
    json doc = show_inspect(0, 0, 5, 100000, 3);
    doc["rulesets"][1]["stage"]["handoff_refused"] = 1;
    Counters no_splice = after_stats;
    no_splice["tcp-spliced-after-inspection"] = 0;
    auto bad = check_path({.mode = "handoff", .received = 1000000000, .connections = 5, .streams = 4}, before,
                          snap(no_splice, doc));
    EXPECT_TRUE(has_problem(bad, "the stage handed 3 connections back to XDP, expected at least 4"));
    EXPECT_TRUE(has_problem(bad, "handoff_refused = 1"));
    EXPECT_TRUE(has_problem(bad, "expected at least 4 x 65536"));
    EXPECT_TRUE(has_problem(bad, "tcp-spliced-after-inspection = 0"));
    EXPECT_FALSE(has_problem(bad, "handoffs ="));  // hand-offs are what this path is for
}

TEST(BenchInspectPath, TheFastPathMustNotReachTheStage) {
    auto before = snap(kStatsBefore, show_inspect(4, 100, 1, 10));
    Counters after_stats = kStatsBefore;
    after_stats["rx"] += 5000;
    after_stats["forward"] += 4990;
    auto good = check_path({.mode = "fast"}, before, snap(after_stats, show_inspect(4, 100, 1, 10)));
    EXPECT_TRUE(good.ok()) << good.problem_text();
    EXPECT_FALSE(contains(good.summary, "handoffs="));

    // One connection reached bench-handoff: every ruleset counts on the fast path.
    auto seen = check_path({.mode = "fast"}, before, snap(after_stats, show_inspect(4, 100, 2, 10)));
    EXPECT_TRUE(has_problem(seen, "the stage saw 1 connections (0 packets punted) on the fast path"));
    Counters punted = after_stats;
    punted["punt-to-inspection"] += 3;
    auto p = check_path({.mode = "fast"}, before, snap(punted, show_inspect(4, 100, 1, 10)));
    EXPECT_TRUE(has_problem(p, "(3 packets punted)"));
}

TEST(BenchInspectPath, AFullSessionTableFailsEveryMode) {
    auto before = snap(kStatsBefore, show_inspect(0, 0, 0, 0));
    Counters full = kStatsBefore;
    full["drop-session-table-full"] = 384;
    auto c = check_path({.mode = "fast"}, before, snap(full, show_inspect(0, 0, 0, 0)));
    EXPECT_TRUE(has_problem(c, "drop-session-table-full = 384: the session table is full"));
}

// ------------------------------------------------------------------ report

namespace {

std::vector<json> synthetic_records() {
    std::vector<json> r;
    r.push_back({{"event", "setup"}, {"date", "2026-12-01 10:00 UTC"}, {"machine", "6.18, 2 CPUs, Test CPU"},
                 {"load_start", "0.50 0.40 0.30"}, {"passes", 2}, {"passes_a", 2}, {"time", 5}, {"streams", 4},
                 {"small", 10}, {"counts", {1, 1000}}, {"conn_time", 3.0}, {"conn_warmup", 0.5},
                 {"conn_threads", 2}, {"conn_concurrency", 32}, {"handoff_limit", "64KiB"},
                 {"svg", "/tmp/x.svg"}});
    // (a): pass 1 and 2, IPv4 only.
    for (int pass : {1, 2}) {
        r.push_back({{"part", "a"}, {"mode", "kernel"}, {"family", "v4"}, {"pass", pass}, {"gbps", 20.0 * pass},
                     {"path", ""}});
        r.push_back({{"part", "a"}, {"mode", "fast"}, {"family", "v4"}, {"pass", pass}, {"gbps", 10.0 * pass},
                     {"path", "rx=1 fast"}});
        r.push_back({{"part", "a"}, {"mode", "inspect"}, {"family", "v4"}, {"pass", pass}, {"gbps", 5.0},
                     {"path", "rx=2 inspect"}});
        r.push_back({{"part", "a"}, {"mode", "handoff"}, {"family", "v4"}, {"pass", pass}, {"gbps", 10.0},
                     {"path", "rx=3 handoff"}});
    }
    // (c): one pass, kernel and inspected, IPv6; the inspected run had failures.
    r.push_back({{"part", "c"}, {"mode", "kernel"}, {"family", "v6"}, {"pass", 1}, {"per_second", 12000.4},
                 {"completed", 36001}, {"failed", 0}, {"p50_us", 4000}, {"p99_us", 9000}, {"path", ""}});
    r.push_back({{"part", "c"}, {"mode", "inspect"}, {"family", "v6"}, {"pass", 1}, {"per_second", 6000.0},
                 {"completed", 18000}, {"failed", 2}, {"p50_us", 10000}, {"p99_us", 30001}, {"path", "rx=4 c"},
                 {"client", "{\"completed\": 18000}"}});
    // (b): kernel, fast, 1 and 1000 patterns over two passes.
    r.push_back({{"part", "b"}, {"event", "start"}, {"patterns", 1}, {"pass", 1}, {"seconds", 2.44}});
    for (int pass : {1, 2}) {
        r.push_back({{"part", "b"}, {"mode", "kernel"}, {"family", "v4"}, {"pass", pass}, {"gbps", 20.0},
                     {"path", ""}});
        r.push_back({{"part", "b"}, {"mode", "fast"}, {"family", "v4"}, {"pass", pass}, {"gbps", 16.0},
                     {"path", "rx=5"}});
        r.push_back({{"part", "b"}, {"mode", "inspect"}, {"family", "v4"}, {"pass", pass}, {"gbps", 8.0},
                     {"patterns", 1}, {"path", "rx=6"}});
        r.push_back({{"part", "b"}, {"mode", "inspect"}, {"family", "v4"}, {"pass", pass}, {"gbps", 4.0 * pass},
                     {"patterns", 1000}, {"path", "rx=7"}});
    }
    r.push_back({{"part", "b"}, {"event", "reload"}, {"patterns", 1000}, {"pass", 1}, {"seconds", 4.0}});
    r.push_back({{"part", "b"}, {"event", "reload"}, {"patterns", 1000}, {"pass", 2}, {"seconds", 5.0}});
    for (int round : {1, 2, 3}) {
        r.push_back({{"part", "s"}, {"patterns", 1}, {"round", round}, {"compile_s", 0.001},
                     {"stream_state_bytes", 43}, {"c2s_gbps", 200.0}, {"s2c_gbps", 190.0}});
        r.push_back({{"part", "s"}, {"patterns", 1000}, {"round", round}, {"compile_s", 2.0 + round},
                     {"stream_state_bytes", 327}, {"c2s_gbps", 24.0}, {"s2c_gbps", 22.0}});
    }
    r.push_back({{"event", "end"}, {"load_end", "1.00 0.80 0.60"}, {"elapsed_s", 432}});
    return r;
}

}  // namespace

TEST(BenchInspectReport, TheTablesOfTheFormerReport) {
    const std::string md = inspect_report(synthetic_records());
    EXPECT_EQ(md.rfind("## sluice inspection benchmark, 2026-12-01 10:00 UTC\n\nMachine: 6.18, 2 CPUs, Test CPU; "
                       "load average (1, 5, 15 min) 0.50 0.40 0.30 at the start, 1.00 0.80 0.60 at the end; the run "
                       "took 7 min 12 s.\n",
                       0),
              0u);
    // (a): medians, per-pass ratios, a family without runs left out.
    EXPECT_TRUE(contains(md, "### (a) Throughput: kernel forwarding, fast path, inspected path, inspected and handed "
                             "off\n\niperf3 TCP LAN host → WAN host, Gbit/s (receiver), median (min–max) over 2 "
                             "interleaved passes, `-t 5 -P 4`; inspected = `inspect: bench` with 10 patterns"));
    EXPECT_TRUE(contains(md, "| family | kernel forwarding | sluice fast path (permit) | inspected | inspected, "
                             "handed off | fast / kernel | inspected / fast | handed off / fast | inspected / kernel "
                             "|\n|---|---|---|---|---|---|---|---|---|\n"));
    EXPECT_TRUE(contains(md, "| IPv4 | 30.00 (20.00–40.00) | 15.00 (10.00–20.00) | 5.00 (5.00–5.00) | 10.00 "
                             "(10.00–10.00) | 0.50 (0.50–0.50) | 0.38 (0.25–0.50) | 0.75 (0.50–1.00) | 0.19 "
                             "(0.12–0.25) |\n"));
    EXPECT_FALSE(contains(md, "| IPv6 | 30.00"));
    EXPECT_TRUE(contains(md, "Every handed-off run was checked: the stage scanned at least 4 × 64KiB"));
    // (b): one row per count, reload times, the reference rows, flatness, starts.
    EXPECT_TRUE(contains(md, "| patterns | inspected | inspected / fast path | inspected / kernel | reload to this "
                             "size, s |\n|---|---|---|---|---|\n| 1 | 8.00 (8.00–8.00) | 0.50 (0.50–0.50) | 0.40 "
                             "(0.40–0.40) | – |\n| 1000 | 6.00 (4.00–8.00) | 0.38 (0.25–0.50) | 0.30 (0.20–0.40) | "
                             "4.50 (4.00–5.00) |\n| *fast path (permit)* | 16.00 (16.00–16.00) | 1 | 0.80 "
                             "(0.80–0.80) |  |\n| *kernel forwarding* | 20.00 (20.00–20.00) |  | 1 |  |\n"));
    EXPECT_TRUE(contains(md, "Flatness: inspected with 1000 patterns / with 1, per pass: 0.75 (0.50–1.00).\n"));
    EXPECT_TRUE(contains(md, "`sluice run` until it reported running (BPF load, attach, stage start): 1 patterns "
                             "2.4 (2.4–2.4) s.\n"));
    EXPECT_TRUE(contains(md, "median (min–max) of 3 rounds; *scan share*"));
    EXPECT_TRUE(contains(md, "| 1 | 0.00 (0.00–0.00) | 43 | 200.0 (200.0–200.0) | 190.0 (190.0–190.0) | 4% |\n"));
    EXPECT_TRUE(contains(md, "| 1000 | 4.00 (3.00–5.00) | 327 | 24.0 (24.0–24.0) | 22.0 (22.0–22.0) | 25% |\n"));
    EXPECT_TRUE(contains(md, "\nChart: `/tmp/x.svg`\n"));
    // (c): the fast path and IPv4 are missing: dashes, and no IPv4 row.
    EXPECT_TRUE(contains(md, "median (min–max) over 2 interleaved passes, 3 s each after 0.5 s warm-up, 2 client "
                             "threads × 32 connections in flight"));
    EXPECT_TRUE(contains(md, "| IPv6 | 12000 (12000–12000) | – | 6000 (6000–6000) | – | – | 0.50 (0.50–0.50) |\n"));
    EXPECT_TRUE(contains(md, "| IPv6 | 4000 / 9000 | – | 10000 / 30001 | 0, –, 2 |\n"));
    EXPECT_FALSE(contains(md, "| IPv4 | 4000"));
    // The sections in the former order, and the per-run counters in record order.
    const size_t a = md.find("### (a)"), b = md.find("### (b)"), c = md.find("### (c)"),
                 d = md.find("### Per-run counters");
    ASSERT_NE(d, std::string::npos);
    EXPECT_LT(a, b);
    EXPECT_LT(b, c);
    EXPECT_LT(c, d);
    EXPECT_TRUE(contains(md, "```\na fast v4 pass 1: rx=1 fast\na inspect v4 pass 1: rx=2 inspect\n"));
    EXPECT_TRUE(contains(md, "c inspect v6 pass 1: rx=4 c\nc inspect v6 pass 1: 2 failed connections: "
                             "{\"completed\": 18000}\n"));
    EXPECT_TRUE(contains(md, "b inspect n=1000 v4 pass 2: rx=7\n"));
    EXPECT_FALSE(contains(md, "a kernel"));  // kernel runs have no sluice counters
    EXPECT_EQ(md.substr(md.size() - 5), "\n```\n");
}

TEST(BenchInspectReport, PartsThatDidNotRunAreLeftOut) {
    std::vector<json> records;
    for (const auto& r : synthetic_records())
        if (r.value("part", "") != "b" && r.value("part", "") != "s") records.push_back(r);
    const std::string md = inspect_report(records);
    EXPECT_TRUE(contains(md, "### (a)"));
    EXPECT_FALSE(contains(md, "### (b)"));
    EXPECT_FALSE(contains(md, "Chart:"));
    EXPECT_EQ(inspect_chart(records), "");
}

TEST(BenchInspectReport, TheChartDrawsTheInspectedLineAndBothReferences) {
    const std::string svg = inspect_chart(synthetic_records());
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
    EXPECT_TRUE(contains(svg, "Inspected-path throughput vs ruleset size (IPv4, iperf3)"));
    EXPECT_TRUE(contains(svg, "data-series=\"inspected path (median, min–max whiskers)\""));
    EXPECT_TRUE(contains(svg, "inspected, 1000 patterns: 6.00"));
    EXPECT_TRUE(contains(svg, "sluice fast path (permit): 16.00"));
    EXPECT_TRUE(contains(svg, "kernel forwarding: 20.00"));
    EXPECT_TRUE(contains(svg, ">1000</text>"));  // the x axis names the counts
    EXPECT_TRUE(contains(svg, "median and min–max of 2 interleaved passes, iperf3 -t 5 -P 4"));
}
