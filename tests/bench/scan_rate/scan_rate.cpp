// sluice_scan_rate: the inspection stage's scanner alone, without sockets,
// for `sluice bench inspect` (docs/inspect-bench.md, part (b)).
//
//   sluice_scan_rate CONFIG [--seconds 1]
//
// Compiles every inspect ruleset of CONFIG the way the daemon does
// (inspect::compile_rulesets: one stream-mode database per direction) and
// feeds 256 KiB chunks of random bytes (the stage's read size, the shape of
// iperf3's payload) through one DirectionStream per direction on this thread,
// with one Scratch, for --seconds each. Prints one JSON line per ruleset:
// patterns, compile seconds (both directions), stream state bytes, and the
// scan rate of each direction in Gbit/s of one core. A match stops it with an
// error: the benchmark's rulesets are built not to match random bytes.
//
// The inspected path's per-byte cost is this scan plus two TCP sockets and
// two copies; comparing the two says how much of (b)'s curve hyperscan can
// explain.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "config/load_config.h"
#include "inspect/ruleset_db.h"
#include "inspect/scanner.h"

namespace {

using Clock = std::chrono::steady_clock;
using sluice::inspect::Direction;

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "sluice_scan_rate: %s\n", message.c_str());
    std::exit(2);
}

double scan_gbps(const std::shared_ptr<const sluice::inspect::CompiledRuleset>& ruleset, Direction direction,
                 const std::vector<uint8_t>& chunk, double seconds, sluice::inspect::Scratch& scratch) {
    if (!ruleset->database(direction)) return 0.0;
    auto stream = sluice::inspect::DirectionStream::open(ruleset, direction, scratch);
    if (!stream) die("cannot open a stream: " + stream.error().message);
    const auto t0 = Clock::now();
    const auto until = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    uint64_t bytes = 0;
    while (Clock::now() < until) {
        for (int i = 0; i < 16; ++i) {
            auto matches = stream->scan(std::span<const uint8_t>(chunk), scratch);
            if (!matches) die("scan failed: " + matches.error().message);
            if (!matches->empty()) die("a pattern of ruleset " + ruleset->name + " matched random bytes");
            bytes += chunk.size();
        }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    return static_cast<double>(bytes) * 8 / elapsed / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) die("usage: sluice_scan_rate CONFIG [--seconds S]");
    double seconds = 1.0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (std::string(argv[i]) == "--seconds")
            seconds = std::stod(argv[i + 1]);
        else
            die(std::string("unknown option ") + argv[i]);
    }
    auto config = sluice::config::load_config(argv[1]);
    if (!config) die(config.error().message);
    std::vector<sluice::config::Diagnostic> problems;
    const auto c0 = Clock::now();
    auto compiled = sluice::inspect::compile_rulesets(config.value(), problems);
    const double compile_s = std::chrono::duration<double>(Clock::now() - c0).count();
    if (!compiled) die(compiled.error().message);

    std::vector<uint8_t> chunk(256 * 1024);
    std::mt19937_64 rng(20261130);
    for (auto& b : chunk) b = static_cast<uint8_t>(rng());
    sluice::inspect::Scratch scratch;
    for (const auto& ruleset : compiled->rulesets) {
        for (Direction d : {Direction::client_to_server, Direction::server_to_client})
            if (const auto* db = ruleset->database(d))
                if (auto s = scratch.reserve(*db); !s) die("scratch: " + s.error().message);
        const auto* db = ruleset->database(Direction::client_to_server);
        const double c2s = scan_gbps(ruleset, Direction::client_to_server, chunk, seconds, scratch);
        const double s2c = scan_gbps(ruleset, Direction::server_to_client, chunk, seconds, scratch);
        std::printf(
            "{\"ruleset\": \"%s\", \"patterns\": %zu, \"compile_s\": %.3f, \"stream_state_bytes\": %zu, "
            "\"c2s_gbps\": %.2f, \"s2c_gbps\": %.2f}\n",
            ruleset->name.c_str(), ruleset->patterns.size(), compile_s, db ? db->stream_size() : size_t{0}, c2s, s2c);
    }
    return 0;
}
