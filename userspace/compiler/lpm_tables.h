// Source and destination LPM tables. Each distinct prefix P of a field (plus
// /0 of each family) maps to the rules whose field contains a prefix Q ⊇ P
// (including `any` rules). The kernel's longest-prefix match then returns, for
// an address a, the entry of the longest P containing a — and every Q that
// contains a contains that P — so the value is exactly the rules matching a.
// The classifier turns these sets into class ids; source NAT keeps them.
#pragma once

#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "compiler/bitset.h"
#include "compiler/compiled_config.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {

// The table of one family: fields[i] is rule i's field, or nullptr when rule
// i takes no part in this family (it then has no bit anywhere in the table).
std::vector<std::pair<policy_lpm_key_v4, Bits>> lpm_entries_v4(const std::vector<const PrefixSet*>& fields,
                                                               uint8_t generation, size_t words);
std::vector<std::pair<policy_lpm_key_v6, Bits>> lpm_entries_v6(const std::vector<const PrefixSet*>& fields,
                                                               uint8_t generation, size_t words);

// An LPM key (policy_lpm_key_v4/_v6) for a prefix: the generation byte counts
// in prefixlen.
template <typename Key>
Key lpm_key(int length, const std::array<uint8_t, 16>& addr, uint8_t generation) {
    Key key;
    std::memset(&key, 0, sizeof key);
    key.prefixlen = static_cast<__u32>(8 + length);
    key.generation = generation;
    std::memcpy(key.addr, addr.data(), sizeof key.addr);
    return key;
}

}  // namespace sluice::compiler
