// Rule bitsets while compiling: only the words in use (ceil(rules/64)), so
// building tables for a few rules does not shuffle 1280-byte map values around.
// Bit i = rule i, in word i/64, bit i%64 (maps/policy.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/compiled_config.h"

namespace sluice::compiler {

using Bits = std::vector<uint64_t>;

inline void set_bit(Bits& bits, uint32_t rule) { bits[rule / 64] |= uint64_t{1} << (rule % 64); }
inline bool test_bit(const Bits& bits, uint32_t rule) { return (bits[rule / 64] >> (rule % 64)) & 1; }

inline void or_into(Bits& into, const Bits& from) {
    for (size_t i = 0; i < into.size(); ++i) into[i] |= from[i];
}

// The map value: the used words, the rest zero.
inline PolicyBitset to_map_value(const Bits& bits) {
    PolicyBitset out{};
    for (size_t i = 0; i < bits.size() && i < POLICY_BITSET_WORDS; ++i) out.words[i] = bits[i];
    return out;
}

// Lowest set bit of a & b & c & d over `words` words: the winning rule, as the
// BPF program computes it.
inline std::optional<uint32_t> first_common_bit(const PolicyBitset& a, const PolicyBitset& b,
                                                const PolicyBitset& c, const PolicyBitset& d,
                                                uint16_t words) {
    for (uint16_t w = 0; w < words; ++w) {
        uint64_t v = a.words[w] & b.words[w] & c.words[w] & d.words[w];
        if (v) return static_cast<uint32_t>(w * 64 + __builtin_ctzll(v));
    }
    return std::nullopt;
}

}  // namespace sluice::compiler
