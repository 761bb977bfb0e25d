// Equivalence classes of one classifier field (maps/policy.h): every distinct
// rule set gets one id, in order of first appearance; id 0 is the empty set
// (no rule allows the value), so the BPF side can stop at a 0.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/bitset.h"

namespace sluice::compiler {

struct BitsHash {
    size_t operator()(const Bits& bits) const noexcept {
        return std::hash<std::string_view>{}(
            std::string_view(reinterpret_cast<const char*>(bits.data()), bits.size() * sizeof(uint64_t)));
    }
};

class ClassSet {
public:
    explicit ClassSet(size_t words) : words_(words) { sets_.emplace_back(words); }

    uint32_t intern(const Bits& bits) {
        if (none_set(bits)) return 0;
        auto [it, inserted] = ids_.try_emplace(bits, static_cast<uint32_t>(sets_.size()));
        if (inserted) sets_.push_back(bits);
        return it->second;
    }

    size_t size() const { return sets_.size(); }   // including the empty class 0
    size_t words() const { return words_; }
    const Bits& operator[](uint32_t id) const { return sets_[id]; }
    std::vector<Bits> take() { return std::move(sets_); }

private:
    size_t words_;
    std::vector<Bits> sets_;
    std::unordered_map<Bits, uint32_t, BitsHash> ids_;
};

}  // namespace sluice::compiler
