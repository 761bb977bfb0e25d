#include "map_readers.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

namespace sluice::test {

const std::vector<StatInfo>& stat_table() {
    static const std::vector<StatInfo> table = [] {
        std::vector<StatInfo> t;
#define SLUICE_TEST_STAT_ROW(e, str, kind) t.push_back(StatInfo{e, #e, str, #kind});
        SLUICE_STATS(SLUICE_TEST_STAT_ROW)
#undef SLUICE_TEST_STAT_ROW
        return t;
    }();
    return table;
}

Result<std::vector<uint64_t>> read_percpu_sums(int fd, uint32_t key, size_t value_size) {
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) return make_error("libbpf_num_possible_cpus failed");
    // Per-CPU values are laid out rounded up to 8 bytes each.
    size_t stride = (value_size + 7) / 8 * 8;
    std::vector<uint8_t> values(stride * static_cast<size_t>(cpus));
    if (bpf_map_lookup_elem(fd, &key, values.data()) != 0)
        return make_error("per-CPU lookup " + std::to_string(key) + ": " + std::strerror(errno));
    std::vector<uint64_t> sums(value_size / 8, 0);
    for (int c = 0; c < cpus; ++c) {
        for (size_t w = 0; w < sums.size(); ++w) {
            uint64_t v;
            std::memcpy(&v, &values[stride * static_cast<size_t>(c) + 8 * w], sizeof v);
            sums[w] += v;
        }
    }
    return sums;
}

Result<std::vector<uint64_t>> read_stats(int fd) {
    struct bpf_map_info info;
    std::memset(&info, 0, sizeof info);
    __u32 len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
        return make_error(std::string("stats map info: ") + std::strerror(errno));
    std::vector<uint64_t> sums(info.max_entries, 0);
    for (__u32 key = 0; key < info.max_entries; ++key) {
        auto value = read_percpu_sums(fd, key, info.value_size);
        if (!value) return make_error("stats: " + value.error().message);
        sums[key] = value.value().at(0);
    }
    return sums;
}

std::map<int, int64_t> stat_delta(const std::vector<uint64_t>& before, const std::vector<uint64_t>& after) {
    std::map<int, int64_t> d;
    for (size_t i = 0; i < std::min(before.size(), after.size()); ++i)
        if (after[i] != before[i]) d[static_cast<int>(i)] = static_cast<int64_t>(after[i] - before[i]);
    return d;
}

std::string describe_delta(const std::map<int, int64_t>& delta) {
    if (delta.empty()) return "(no counter changed)";
    std::string s;
    const auto& table = stat_table();
    for (auto [id, n] : delta) {
        if (!s.empty()) s += ", ";
        s += id < static_cast<int>(table.size()) ? table[static_cast<size_t>(id)].name
                                                 : "stat#" + std::to_string(id);
        s += (n >= 0 ? " +" : " ") + std::to_string(n);
    }
    return s;
}

session_key_v4 session_key(const Ipv4Addr& src, const Ipv4Addr& dst, uint16_t sport, uint16_t dport,
                           uint8_t protocol) {
    session_key_v4 k;
    std::memset(&k, 0, sizeof k);
    std::memcpy(&k.src_addr, src.bytes.data(), 4);
    std::memcpy(&k.dst_addr, dst.bytes.data(), 4);
    k.src_port = htons(sport);
    k.dst_port = htons(dport);
    k.protocol = protocol;
    return k;
}

session_key_v6 session_key(const Ipv6Addr& src, const Ipv6Addr& dst, uint16_t sport, uint16_t dport,
                           uint8_t protocol) {
    session_key_v6 k;
    std::memset(&k, 0, sizeof k);
    std::memcpy(k.src_addr, src.bytes.data(), 16);
    std::memcpy(k.dst_addr, dst.bytes.data(), 16);
    k.src_port = htons(sport);
    k.dst_port = htons(dport);
    k.protocol = protocol;
    return k;
}

namespace {
template <typename Key>
std::optional<session_value> lookup(int fd, const Key& key) {
    session_value v;
    std::memset(&v, 0, sizeof v);
    if (bpf_map_lookup_elem(fd, &key, &v) != 0) return std::nullopt;
    return v;
}
}  // namespace

std::optional<session_value> lookup_session(int fd, const session_key_v4& key) { return lookup(fd, key); }
std::optional<session_value> lookup_session(int fd, const session_key_v6& key) { return lookup(fd, key); }

namespace {
std::vector<std::vector<uint8_t>> all_keys(int fd) {
    struct bpf_map_info info;
    std::memset(&info, 0, sizeof info);
    __u32 len = sizeof info;
    std::vector<std::vector<uint8_t>> keys;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return keys;
    std::vector<uint8_t> key(info.key_size), next(info.key_size);
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
        keys.push_back(next);
        key = next;
        prev = key.data();
        if (keys.size() > info.max_entries) break;  // map changing under us
    }
    return keys;
}
}  // namespace

size_t count_entries(int fd) { return all_keys(fd).size(); }

void clear_map(int fd) {
    for (const auto& k : all_keys(fd)) bpf_map_delete_elem(fd, k.data());
}

screen_counter read_screen_counter(int screen_hits_fd, int runtime_cfg_fd, uint16_t zone) {
    screen_counter c{};
    runtime_config cfg{};
    uint32_t key = 0;
    EXPECT_EQ(bpf_map_lookup_elem(runtime_cfg_fd, &key, &cfg), 0);
    auto words = read_percpu_sums(screen_hits_fd, (cfg.policy_generation & 1) * SLUICE_MAX_ZONES + zone,
                                  sizeof(screen_counter));
    EXPECT_TRUE(words.ok()) << (words.ok() ? "" : words.error().message);
    if (words.ok()) std::memcpy(&c, words.value().data(), sizeof(c));
    return c;
}

}  // namespace sluice::test
