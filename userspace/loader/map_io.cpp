#include "loader/map_io.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <array>

namespace sluice {

Status read_runtime_config(int fd, runtime_config& out) {
    uint32_t key = 0;
    if (bpf_map_lookup_elem(fd, &key, &out) != 0) return map_error("cannot read", "runtime_cfg", errno);
    return {};
}

Status write_runtime_config(int fd, const runtime_config& cfg) {
    uint32_t key = 0;
    if (bpf_map_update_elem(fd, &key, &cfg, BPF_ANY) != 0) return map_error("cannot write", "runtime_cfg", errno);
    return {};
}

Status delete_generation(int fd, const std::string& name, uint8_t gen, size_t generation_offset) {
    bpf_map_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return map_error("cannot inspect", name, errno);
    if (generation_offset >= info.key_size) return make_error("internal: map " + name + " has no generation byte there");
    std::vector<uint8_t> key(info.key_size), next(info.key_size);
    std::vector<std::vector<uint8_t>> doomed;
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
        if (next[generation_offset] == gen) doomed.push_back(next);
        key = next;
        prev = key.data();
    }
    for (const auto& k : doomed) {
        if (bpf_map_delete_elem(fd, k.data()) != 0 && errno != ENOENT)
            return map_error("cannot delete from", name, errno);
    }
    return {};
}

Status write_devmap(int fd, const std::vector<uint32_t>& ifindexes) {
    for (uint32_t ifindex : ifindexes) {
        bpf_devmap_val val{};
        val.ifindex = ifindex;
        if (bpf_map_update_elem(fd, &ifindex, &val, BPF_ANY) != 0) return map_error("cannot write", "tx_ports", errno);
    }
    return {};
}

Status prune_devmap(int fd, const std::vector<uint32_t>& keep) {
    for (uint32_t key : map_keys<uint32_t>(fd)) {
        if (std::find(keep.begin(), keep.end(), key) == keep.end()) bpf_map_delete_elem(fd, &key);
    }
    return {};
}

Status prune_zones(int fd, const std::vector<std::pair<zone_key, zone_value>>& keep) {
    for (zone_key key : map_keys<zone_key>(fd)) {
        bool wanted = std::any_of(keep.begin(), keep.end(), [&](const auto& kv) {
            return kv.first.ifindex == key.ifindex && kv.first.vlan_id == key.vlan_id;
        });
        if (!wanted) bpf_map_delete_elem(fd, &key);
    }
    return {};
}

Status zero_percpu(int fd, const std::string& name, uint32_t first, uint32_t count, size_t value_size) {
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) return make_error("cannot count possible CPUs");
    // Per-CPU values are 8-byte aligned, one slot per possible CPU.
    const size_t slot = static_cast<size_t>(cpus) * ((value_size + 7) / 8 * 8);
    // In batches (one syscall per 1024 keys: host_hits alone has 16,384 and
    // every datapath load clears it); per key where the kernel has no
    // batched update for the map.
    constexpr uint32_t kBatch = 1024;
    std::vector<uint8_t> zeros(slot * std::min(count, kBatch), 0);
    std::vector<uint32_t> keys(std::min(count, kBatch));
    uint32_t key = first;
    while (key < first + count) {
        uint32_t n = std::min(kBatch, first + count - key);
        for (uint32_t i = 0; i < n; ++i) keys[i] = key + i;
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        uint32_t done = n;
        const int rc = bpf_map_update_batch(fd, keys.data(), zeros.data(), &done, &opts);
        if (rc == 0 && done > 0) {
            key += done;
            continue;
        }
        if (rc != 0 && errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP)
            return map_error("cannot clear", name, errno);
        for (; key < first + count; ++key)
            if (bpf_map_update_elem(fd, &key, zeros.data(), BPF_ANY) != 0) return map_error("cannot clear", name, errno);
    }
    return {};
}

Result<std::vector<uint64_t>> read_percpu_words(int fd, uint32_t key, size_t words) {
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) return make_error("cannot count CPUs");
    std::vector<uint64_t> per_cpu(static_cast<size_t>(cpus) * words);
    if (bpf_map_lookup_elem(fd, &key, per_cpu.data()) != 0) return map_error("cannot read", "per-CPU counters", errno);
    std::vector<uint64_t> sums(words, 0);
    for (size_t i = 0; i < per_cpu.size(); ++i) sums[i % words] += per_cpu[i];
    return sums;
}

Result<stat_counter> read_stat_counter(int fd, uint32_t reason) {
    auto words = read_percpu_words(fd, reason, 2);
    if (!words) return words.error();
    return stat_counter{words.value()[0], words.value()[1]};
}

Result<std::vector<stat_counter>> read_stat_counters(int fd) {
    std::vector<stat_counter> totals(STAT_REASON_COUNT);
    for (uint32_t i = 0; i < STAT_REASON_COUNT; ++i) {
        auto one = read_stat_counter(fd, i);
        if (!one) return one.error();
        totals[i] = one.value();
    }
    return totals;
}

Result<std::vector<uint64_t>> read_percpu_counters(int fd, uint32_t entries) {
    std::vector<uint64_t> totals(entries, 0);
    for (uint32_t i = 0; i < entries; ++i) {
        auto one = read_percpu_words(fd, i, 1);
        if (!one) return one.error();
        totals[i] = one.value()[0];
    }
    return totals;
}

}  // namespace sluice
