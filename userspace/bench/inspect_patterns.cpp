#include "bench/inspect_patterns.h"
#include "bench/lab.h"

#include <bit>
#include <cstdio>

namespace sluice::bench {
namespace {

constexpr int kN = 624, kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU, kUpper = 0x80000000U, kLower = 0x7fffffffU;

const std::string kConsonants = "bcdfghjklmnpqrstvwxz";
const std::string kVowels = "aeiou";

std::string word(PyRandom& rng, int lo = 5, int hi = 9) {
    const int n = rng.randint(lo, hi);
    std::string w;
    for (int i = 0; i < n; ++i) w += rng.choice(i % 2 == 0 ? kConsonants : kVowels);
    return w;
}

struct Shape {
    std::string regex;
    bool caseless = false;
};

// Shape i mod 8. Words are drawn left to right, as Python evaluates an f-string.
Shape shape(PyRandom& rng, int i) {
    auto w = [&] { return word(rng); };
    switch (i % 8) {
    case 0: {
        return {"[a-z]{4}[0-9]{2}" + w() + "[A-Z]{3}"};
    }
    case 1: {
        std::string a = w();
        std::string b = w();
        return {a + "[_-]" + b + "=[0-9a-f]{8,32}"};
    }
    case 2:
        return {"flag\\{" + w() + "[A-Za-z0-9_]{4,32}\\}"};
    case 3: {
        std::string a = w();
        std::string b = w();
        std::string c = w();
        std::string d = w();
        return {"/(?:" + a + "|" + b + ")/" + c + "\\.(?:php|cgi|jsp)\\?" + d + "="};
    }
    case 4: {
        std::string r;
        char buf[8];
        for (int k = 0; k < 8; ++k) {
            std::snprintf(buf, sizeof buf, "\\x%02x", rng.below(256));
            r += buf;
        }
        return {r};
    }
    case 5: {
        std::string a = w();
        std::string b = w();
        return {a + ":\\s*[0-9]{3,5}\\s+" + b, true};
    }
    case 6: {
        std::string a = w();
        std::string b = w();
        return {"(?:select|union)\\s+" + a + "\\s+from\\s+" + b, true};
    }
    default: {
        std::string a = w();
        std::string b = w();
        std::string c = w();
        return {a + "(?:\\." + b + "){1,3}@" + c + "\\.(?:com|net|org)"};
    }
    }
}

}  // namespace

PyRandom::PyRandom(uint32_t seed) {
    // init_genrand(19650218), then init_by_array({seed}): CPython's seeding of
    // a non-negative integer below 2^32.
    mt_[0] = 19650218U;
    for (int i = 1; i < kN; ++i) mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
    int i = 1;
    for (int k = kN; k; --k) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + seed;  // key[0] + j, j = 0
        if (++i >= kN) {
            mt_[0] = mt_[kN - 1];
            i = 1;
        }
    }
    for (int k = kN - 1; k; --k) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
        if (++i >= kN) {
            mt_[0] = mt_[kN - 1];
            i = 1;
        }
    }
    mt_[0] = 0x80000000U;
    index_ = kN;
}

uint32_t PyRandom::next_u32() {
    static constexpr uint32_t mag01[2] = {0x0U, kMatrixA};
    if (index_ >= kN) {
        int kk = 0;
        uint32_t y;
        for (; kk < kN - kM; ++kk) {
            y = (mt_[kk] & kUpper) | (mt_[kk + 1] & kLower);
            mt_[kk] = mt_[kk + kM] ^ (y >> 1) ^ mag01[y & 1U];
        }
        for (; kk < kN - 1; ++kk) {
            y = (mt_[kk] & kUpper) | (mt_[kk + 1] & kLower);
            mt_[kk] = mt_[kk + (kM - kN)] ^ (y >> 1) ^ mag01[y & 1U];
        }
        y = (mt_[kN - 1] & kUpper) | (mt_[0] & kLower);
        mt_[kN - 1] = mt_[kM - 1] ^ (y >> 1) ^ mag01[y & 1U];
        index_ = 0;
    }
    uint32_t y = mt_[index_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

uint32_t PyRandom::getrandbits(int k) {
    return next_u32() >> (32 - k);
}

uint32_t PyRandom::below(uint32_t n) {
    const int k = std::bit_width(n);
    uint32_t r = getrandbits(k);
    while (r >= n) r = getrandbits(k);
    return r;
}

int PyRandom::randint(int lo, int hi) {
    return lo + static_cast<int>(below(static_cast<uint32_t>(hi - lo + 1)));
}

char PyRandom::choice(const std::string& chars) {
    return chars[below(static_cast<uint32_t>(chars.size()))];
}

std::string canary_text(int patterns) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "sluice-bench-canary-n%04d", patterns);
    return buf;
}

std::vector<std::string> inspect_patterns(int count, const std::string& canary, const std::string& direction,
                                          uint32_t seed) {
    std::vector<std::string> out;
    if (count < 1) return out;
    PyRandom rng(seed);
    out.push_back("- { name: canary, regex: '" + canary + "', direction: " + direction + ", action: alert }");
    char name[16];
    for (int i = 1; i < count; ++i) {
        Shape s = shape(rng, i);
        std::snprintf(name, sizeof name, "p%04d", i);
        out.push_back(std::string("- { name: ") + name + ", regex: '" + s.regex + "', direction: " + direction +
                      ", action: reject" + (s.caseless ? ", caseless: true" : "") + " }");
    }
    return out;
}

std::string inspect_bench_config(int patterns, bool handoff) {
    std::string c = lab_zones_config() + R"(applications:
  iperf-fast: { protocol: tcp, destination-port: 5201 }
  iperf-inspect: { protocol: tcp, destination-port: 5202 }
  conn-fast: { protocol: tcp, destination-port: 5301-5316 }
  conn-inspect: { protocol: tcp, destination-port: 5401-5416 }
)";
    if (handoff) c += "  iperf-handoff: { protocol: tcp, destination-port: 5203 }\n";
    c += R"(policies:
  - { name: fast, from: trust, to: untrust, source: [lan-net], application: [iperf-fast, conn-fast], action: permit }
  - { name: inspected, from: trust, to: untrust, source: [lan-net], application: [iperf-inspect, conn-inspect],
      action: { inspect: bench } }
)";
    if (handoff)
        c += R"(  - { name: handed-off, from: trust, to: untrust, source: [lan-net], application: [iperf-handoff],
      action: { inspect: bench-handoff } }
)";
    c += R"(  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
# (c) opens ~10^5 connections in a minute; with the default 2m a closed flow
# would hold its two session entries long enough to fill the table (2^18
# entries per family). See docs/inspect-bench.md.
timeouts: { tcp-time-wait: 10s }
inspect:
  rulesets:
    bench:
      patterns:
)";
    const std::string canary = canary_text(patterns);
    for (const auto& line : inspect_patterns(patterns, canary)) c += "        " + line + "\n";
    if (handoff) {
        c += std::string("    bench-handoff:\n      inspect-bytes: ") + kHandoffLimit + "\n      patterns:\n";
        for (const auto& line : inspect_patterns(patterns, canary, "client-to-server")) c += "        " + line + "\n";
    }
    return c;
}

}  // namespace sluice::bench
