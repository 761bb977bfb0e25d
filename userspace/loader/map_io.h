// Typed reads and writes of the datapath's maps by fd, with errors that name
// the map. Used by the loader (config apply) and by `show`.
#pragma once

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

inline Error map_error(const char* what, const std::string& map, int err) {
    return make_error(std::string(what) + " map " + map + ": " + std::strerror(err));
}

Status read_runtime_config(int fd, runtime_config& out);
Status write_runtime_config(int fd, const runtime_config& cfg);

// Deletes every key of a generation-keyed map whose generation byte equals
// gen. The byte is at offset 4 in every policy key and the LPM keys NAT
// reuses (pinned in abi_layout.cpp); other keys pass their offsetof.
Status delete_generation(int fd, const std::string& name, uint8_t gen, size_t generation_offset = 4);

template <typename K, typename V>
Status write_entries(int fd, const std::string& name, const std::vector<std::pair<K, V>>& entries) {
    for (const auto& [key, value] : entries) {
        if (bpf_map_update_elem(fd, &key, &value, BPF_ANY) != 0) return map_error("cannot write", name, errno);
    }
    return {};
}

// Writes values to an array map at indexes [first, first + values.size()),
// in batches.
template <typename V>
Status write_array(int fd, const std::string& name, uint32_t first, const std::vector<V>& values) {
    constexpr size_t kBatch = 65536;
    std::vector<uint32_t> keys;
    for (size_t start = 0; start < values.size(); start += kBatch) {
        uint32_t n = static_cast<uint32_t>(std::min(kBatch, values.size() - start));
        keys.resize(n);
        for (uint32_t i = 0; i < n; ++i) keys[i] = first + static_cast<uint32_t>(start) + i;
        uint32_t count = n;
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        if (bpf_map_update_batch(fd, keys.data(), values.data() + start, &count, &opts) != 0) {
            // Older kernels: one by one.
            for (uint32_t i = 0; i < n; ++i) {
                if (bpf_map_update_elem(fd, &keys[i], &values[start + i], BPF_ANY) != 0)
                    return map_error("cannot write", name, errno);
            }
        }
    }
    return {};
}

// Sets the per-CPU values at [first, first + count) to zero on every CPU.
Status zero_percpu(int fd, const std::string& name, uint32_t first, uint32_t count, size_t value_size);

Status write_devmap(int fd, const std::vector<uint32_t>& ifindexes);
Status prune_devmap(int fd, const std::vector<uint32_t>& keep);
Status prune_zones(int fd, const std::vector<std::pair<zone_key, zone_value>>& keep);

// Every key of a hash-like map (get_next_key walk; for small maps).
template <typename K>
std::vector<K> map_keys(int fd) {
    std::vector<K> keys;
    K key{}, next{};
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
        keys.push_back(next);
        key = next;
        prev = &key;
    }
    return keys;
}

// Sums, word by word over all possible CPUs, the value at key of a per-CPU
// map whose value is `words` u64 counters.
Result<std::vector<uint64_t>> read_percpu_words(int fd, uint32_t key, size_t words);
// Sums a per-CPU u64 array slot over all possible CPUs.
Result<std::vector<uint64_t>> read_percpu_counters(int fd, uint32_t entries);
// The stats map (maps/stats.h): packets and bytes per enum stat_reason.
Result<std::vector<stat_counter>> read_stat_counters(int stats_fd);
// One reason's counter, summed over CPUs: one lookup, for a caller that polls it.
Result<stat_counter> read_stat_counter(int stats_fd, uint32_t reason);

}  // namespace sluice
