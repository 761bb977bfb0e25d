#include "config/session_table_size.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::config {
namespace {

// kernel/bpf/hashtab.c: struct htab_elem before its key, and struct bucket.
constexpr uint64_t kHtabElemHeader = 48;
constexpr uint64_t kHtabBucket = 16;

constexpr uint64_t round_up8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

uint64_t round_up_pow2(uint64_t n) {
    uint64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

}  // namespace

uint64_t hash_map_bytes_estimate(uint32_t entries, uint32_t key_size, uint32_t value_size) {
    const uint64_t element = kHtabElemHeader + round_up8(key_size) + round_up8(value_size);
    return element * entries + kHtabBucket * round_up_pow2(entries);
}

uint64_t session_table_bytes_estimate(uint32_t sessions) {
    const uint32_t entries = session_map_entries(sessions);
    return hash_map_bytes_estimate(entries, sizeof(session_key_v4), sizeof(session_value)) +
           hash_map_bytes_estimate(entries, sizeof(session_key_v6), sizeof(session_value));
}

}  // namespace sluice::config
