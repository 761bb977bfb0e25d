// The session table's size (`limits.sessions`, docs/host-protection.md
// "Session table size"): the range a config may ask for, the default, how
// many map entries that is, and what the kernel spends on it.
#pragma once

#include <cstdint>

extern "C" {
#include "abi.h"
}

namespace sluice::config {

// Sessions are flows per address family; each takes two entries (one per
// direction) in sessions_v4 or sessions_v6, so the maps get twice as many.
// The default is the table sluice had before the size was configurable.
inline constexpr uint32_t kDefaultSessions = SLUICE_MAX_SESSIONS / 2;
// Below this a handful of hosts fill the table; above it one family's map
// alone would take about 8 GiB of kernel memory, and 2 x N entries still
// fits the kernel's u32 max_entries with room to spare.
inline constexpr uint32_t kMinSessions = 1024;
inline constexpr uint32_t kMaxSessions = 16777216;

// Entries of one family's map for `sessions` flows.
constexpr uint32_t session_map_entries(uint32_t sessions) { return sessions * 2; }

// Kernel memory of one preallocated BPF hash map (what sessions_v4/v6 are):
// every element is allocated at creation, each a 48-byte htab_elem header
// (64-bit kernels) followed by key and value, each rounded up to 8 bytes;
// plus a 16-byte bucket per power-of-two slot. An estimate: the kernel adds
// one spare element per CPU and a few hundred bytes of fixed overhead.
uint64_t hash_map_bytes_estimate(uint32_t entries, uint32_t key_size, uint32_t value_size);

// Both families' session maps for `sessions` flows each.
uint64_t session_table_bytes_estimate(uint32_t sessions);

}  // namespace sluice::config
