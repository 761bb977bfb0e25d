// The order of a benchmark's measurements: every pass measures every
// configuration, and the order rotates from pass to pass, so no configuration
// always runs first (on a warm or a cold machine) — configurations are
// interleaved, never measured in blocks.
#pragma once

#include <string>
#include <vector>

namespace sluice::bench {

// Pass p (1-based) starts at item (p-1) mod n and goes on in order: over k*n
// passes each item comes first, second, ... equally often.
template <typename T>
std::vector<T> rotated(const std::vector<T>& items, int pass) {
    std::vector<T> out;
    const size_t n = items.size();
    for (size_t i = 0; i < n; ++i) out.push_back(items[(static_cast<size_t>(pass - 1) + i) % n]);
    return out;
}

// Odd passes in order, even passes reversed (for sweeps over a rule count).
template <typename T>
std::vector<T> alternated(const std::vector<T>& items, int pass) {
    if (pass % 2 == 1) return items;
    return std::vector<T>(items.rbegin(), items.rend());
}

// IPv4 first on odd passes, IPv6 first on even ones.
inline std::vector<std::string> families_for_pass(int pass) {
    return alternated<std::string>({"v4", "v6"}, pass);
}

}  // namespace sluice::bench
