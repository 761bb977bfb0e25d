// The inspection benchmark's rulesets (`sluice bench inspect`,
// docs/inspect-bench.md): random, realistic patterns that match nothing the
// benchmark sends, and the config that routes each path to its policy.
//
// The first pattern is the canary: the literal canary_text(N), action
// alert, which the benchmark sends once on purpose to prove that the stage
// runs the N-pattern ruleset (its own counter must rise by one). The other
// N-1 are drawn from eight shapes in turn, all with action reject, so a
// pattern that matched the benchmark's own traffic would reset a connection
// and stop the run instead of quietly lowering a number.
//
// Every pattern is at least as improbable in random bytes as eight fixed
// bytes (one shape is eight random bytes, probability 2^-64 per position), and
// none can match an empty string. Words are consonant-vowel pseudo-words of
// five to nine letters, which occur neither in iperf3's JSON control messages
// nor in sluice_connrate's filler text (the alphabet in order, where no two
// vowels are closer than four letters). Hyperscan accepts every shape: no
// backreferences, no lookaround.
//
// The draw is Python's random.Random(20261130) (Mersenne Twister, CPython's
// seeding and bounded draws), so the rulesets are the ones the former
// scripts/lib/inspect_patterns.py wrote and earlier recorded runs used. The
// same seed gives the same patterns, and a larger count extends a smaller
// one (the first N of 1000 are the N-pattern ruleset), so the points of (b)
// differ only by how many patterns there are.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::bench {

// CPython's random.Random for an integer seed, as far as the patterns need
// it: MT19937 seeded by init_by_array, getrandbits(k) for k <= 32, and
// _randbelow by rejection (which randrange, randint and choice use).
class PyRandom {
public:
    explicit PyRandom(uint32_t seed);
    uint32_t next_u32();
    uint32_t getrandbits(int k);            // 1 <= k <= 32
    uint32_t below(uint32_t n);             // _randbelow(n), n >= 1
    int randint(int lo, int hi);            // lo..hi inclusive
    char choice(const std::string& chars);  // one of chars

private:
    std::array<uint32_t, 624> mt_{};
    int index_ = 624;
};

inline constexpr uint32_t kInspectPatternSeed = 20261130;

// "sluice-bench-canary-n0010"
std::string canary_text(int patterns);

// `count` YAML flow mappings, one a line, ready to go under
// `inspect.rulesets.NAME.patterns:`; every pattern has `direction: DIRECTION`
// (both | client-to-server | server-to-client), which changes nothing else.
std::vector<std::string> inspect_patterns(int count, const std::string& canary, const std::string& direction = "both",
                                          uint32_t seed = kInspectPatternSeed);

// The benchmark's config: policies `fast` (permit; iperf3 5201, short
// connections 5301-5316) and `inspected` (inspect: bench; 5202, 5401-5416),
// deny inbound, tcp-time-wait 10s, and the N-pattern ruleset `bench` with
// canary_text(N). With `handoff` (the config of (a) and (c)) also the policy
// `handed-off` of port 5203 and its ruleset `bench-handoff`: the same N
// patterns, all client-to-server, with inspect-bytes HANDOFF_LIMIT. (b)'s
// configs leave it out, so that its reloads and sluice_scan_rate compile
// only `bench`.
std::string inspect_bench_config(int patterns, bool handoff);

inline constexpr const char* kHandoffLimit = "64KiB";  // as written in the config
inline constexpr uint64_t kHandoffBytes = 65536;       // the same, in bytes

}  // namespace sluice::bench
