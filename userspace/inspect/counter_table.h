// Inspection counters in shared memory (docs/design.md "Inspection stage":
// counters per rule live in shared memory, not in log lines). The stage creates the file and is its
// only writer; `sluice show inspect` reads it live from another process.
// Slots are found by name, so after a reload a ruleset or pattern with an
// unchanged name keeps counting where it was.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "inspect/counter_layout.h"

namespace sluice::inspect {

inline constexpr uint32_t kDefaultCounterSlots = 4096;

// A handle on one slot, cheap to copy; valid while its CounterTable lives.
// Increments are lock-free (relaxed atomics): safe from every worker thread.
class CounterSlotRef {
public:
    explicit CounterSlotRef(CounterSlot* slot) : slot_(slot) {}
    void add(Counter counter, uint64_t amount = 1) const {
        __atomic_fetch_add(&slot_->counters[static_cast<size_t>(counter)], amount, __ATOMIC_RELAXED);
    }
    uint64_t get(Counter counter) const {
        return __atomic_load_n(&slot_->counters[static_cast<size_t>(counter)], __ATOMIC_RELAXED);
    }

private:
    CounterSlot* slot_;
};

// The writer's side: the stage process creates the table and hands slot refs
// to its workers.
class CounterTable {
public:
    // Creates (or replaces) the file at `path` with room for `capacity` named
    // slots plus the overflow slot. The file appears complete or not at all,
    // so a reader never sees half a header. Counting starts at zero.
    static Result<std::unique_ptr<CounterTable>> create(const std::string& path,
                                                        uint32_t capacity = kDefaultCounterSlots);
    ~CounterTable();
    CounterTable(const CounterTable&) = delete;
    CounterTable& operator=(const CounterTable&) = delete;

    // The slot of a ruleset (empty pattern) or of one of its patterns, created
    // on first use. When the table is full or a name is longer than its field,
    // the shared overflow slot (see overflow_names()).
    CounterSlotRef slot(std::string_view ruleset, std::string_view pattern = {});
    // How many slot() requests got the overflow slot.
    uint64_t overflow_names() const;
    const std::string& path() const { return path_; }

private:
    CounterTable(std::string path, void* mapping, size_t size);
    CounterHeader& header() const { return *static_cast<CounterHeader*>(mapping_); }
    CounterSlot& slot_at(uint32_t index) const;

    std::string path_;
    void* mapping_;
    size_t size_;
    std::mutex create_mutex_;                          // serialises slot creation
    std::unordered_map<std::string, uint32_t> index_;  // ruleset + '\0' + pattern -> slot
};

// What a reader sees of one slot.
struct SlotSnapshot {
    std::string ruleset;
    std::string pattern;    // empty: the ruleset's own slot
    bool overflow = false;  // the shared slot of names that did not fit
    std::array<uint64_t, kCounterCount> counters{};

    uint64_t operator[](Counter counter) const { return counters[static_cast<size_t>(counter)]; }
};

struct CounterSnapshot {
    int32_t owner_pid = 0;            // the stage process that created the file
    uint32_t capacity = 0;            // named slots (overflow slot excluded)
    uint64_t overflow_names = 0;      // names that had to share the overflow slot
    std::vector<SlotSnapshot> slots;  // overflow slot first, then in creation order
};

// Reads the counters another process (the stage) writes. A missing file
// means the stage is not running, and the error says so.
Result<CounterSnapshot> read_counter_table(const std::string& path);

}  // namespace sluice::inspect
