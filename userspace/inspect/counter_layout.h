// The byte layout of the inspection counters file, shared by the stage (the
// one writer) and `sluice show inspect` (readers in other processes) through
// a MAP_SHARED mapping. A header, then a fixed number of fixed-size slots.
// Slots are append-only: the writer fills a slot's names, then publishes it
// by raising `slots_used` (release); a reader reads slots [0, slots_used)
// after an acquire load. Counters are plain uint64_t updated with relaxed
// __atomic builtins, so the layout stays trivially copyable and a reader can
// load from a read-only mapping. Changing the layout means raising
// kCounterVersion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sluice::inspect {

inline constexpr uint64_t kCounterMagic = 0x5443'4e49'4543'4c53ULL;  // "SLCEINCT" little-endian
inline constexpr uint32_t kCounterVersion = 2;
inline constexpr size_t kRulesetNameSize = 48;
inline constexpr size_t kPatternNameSize = 64;

// Counters of a ruleset's own slot; a pattern's slot uses only `matches`.
enum class Counter : uint32_t {
    connections,  // TCP connections handed to the stage
    datagrams,    // UDP datagrams scanned
    bytes_client_to_server,
    bytes_server_to_client,
    matches,       // connections/datagrams with at least one match
    resets,        // reject verdicts carried out
    drops,         // drop verdicts carried out
    alerts,        // alert-only matches
    offloaded,     // directions past inspect-bytes, no longer scanned
    stage_errors,  // scans that failed (scratch, memory)
    handoffs,         // TCP connections handed back to the fast path (inspect-bytes)
    handoff_refused,  // TCP connections past inspect-bytes the stage had to keep relaying
};
inline constexpr size_t kCounterCount = static_cast<size_t>(Counter::handoff_refused) + 1;

const char* to_string(Counter counter);

struct CounterHeader {
    uint64_t magic;
    uint32_t version;
    uint32_t slot_count;      // capacity, the overflow slot (index 0) included
    uint32_t slots_used;      // published slots; atomic (release by the writer)
    int32_t owner_pid;        // the stage process that created the file
    uint64_t overflow_names;  // slot() requests that got the overflow slot; atomic
    uint8_t reserved[32];
};

// Slot 0 is the overflow slot: names that found no free slot (or do not fit
// the name fields) count there, so nothing is lost silently.
struct CounterSlot {
    char ruleset[kRulesetNameSize];  // NUL-padded; a name of exactly the size has no NUL
    char pattern[kPatternNameSize];  // empty for the ruleset's own slot
    uint64_t counters[kCounterCount];
};

static_assert(sizeof(CounterHeader) == 64);
static_assert(sizeof(CounterSlot) == 208);
static_assert(offsetof(CounterSlot, counters) % alignof(uint64_t) == 0);
static_assert(std::is_trivially_copyable_v<CounterHeader> && std::is_standard_layout_v<CounterHeader>);
static_assert(std::is_trivially_copyable_v<CounterSlot> && std::is_standard_layout_v<CounterSlot>);

inline constexpr size_t counter_file_size(uint32_t slot_count) {
    return sizeof(CounterHeader) + size_t{slot_count} * sizeof(CounterSlot);
}

}  // namespace sluice::inspect
