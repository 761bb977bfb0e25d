// Rule bitsets while compiling: only the words in use (ceil(rules/64)).
// Bit i = rule i, in word i/64, bit i%64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::compiler {

using Bits = std::vector<uint64_t>;

inline void set_bit(Bits& bits, uint32_t rule) { bits[rule / 64] |= uint64_t{1} << (rule % 64); }

inline void or_into(Bits& into, const Bits& from) {
    for (size_t i = 0; i < into.size(); ++i) into[i] |= from[i];
}

inline bool none_set(const Bits& bits) {
    for (uint64_t w : bits)
        if (w) return false;
    return true;
}

inline size_t words_for(size_t rules) { return rules ? (rules + 63) / 64 : 1; }

}  // namespace sluice::compiler
