#include "loader/egress_tables.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "loader/datapath.h"
#include "loader/map_io.h"

namespace sluice {

namespace {

template <typename K, typename V>
Status prune(int fd, const std::string& name, const std::vector<std::pair<K, V>>& keep) {
    for (const K& k : map_keys<K>(fd)) {
        bool kept = std::any_of(keep.begin(), keep.end(),
                                [&](const auto& e) { return std::memcmp(&e.first, &k, sizeof(K)) == 0; });
        if (kept) continue;
        if (bpf_map_delete_elem(fd, &k) != 0 && errno != ENOENT) return map_error("cannot delete from", name, errno);
    }
    return {};
}

Status set_enabled(const Datapath& dp, bool enabled) {
    const int fd = dp.map_fd(SLUICE_MAP_EGRESS_CFG);
    auto cfg = read_egress_config(fd);
    if (!cfg) return cfg.error();
    if (cfg->enabled == (enabled ? 1 : 0)) return {};
    cfg->enabled = enabled ? 1 : 0;
    return write_egress_config(fd, cfg.value());
}

}  // namespace

Result<egress_config> read_egress_config(int fd) {
    egress_config cfg{};
    uint32_t key = 0;
    if (bpf_map_lookup_elem(fd, &key, &cfg) != 0) return map_error("cannot read", SLUICE_MAP_EGRESS_CFG, errno);
    return cfg;
}

Status write_egress_config(int fd, const egress_config& cfg) {
    uint32_t key = 0;
    if (bpf_map_update_elem(fd, &key, &cfg, BPF_ANY) != 0) return map_error("cannot write", SLUICE_MAP_EGRESS_CFG, errno);
    return {};
}

Status write_egress_tables(const Datapath& dp, const CompiledEgress& e) {
    if (auto s = write_entries(dp.map_fd(SLUICE_MAP_EGRESS_PREFIXES_V4), SLUICE_MAP_EGRESS_PREFIXES_V4, e.prefixes_v4); !s)
        return s;
    if (auto s = write_entries(dp.map_fd(SLUICE_MAP_EGRESS_PREFIXES_V6), SLUICE_MAP_EGRESS_PREFIXES_V6, e.prefixes_v6); !s)
        return s;
    if (auto s = write_entries(dp.map_fd(SLUICE_MAP_EGRESS_SOURCES_V4), SLUICE_MAP_EGRESS_SOURCES_V4, e.sources_v4); !s)
        return s;
    if (auto s = write_entries(dp.map_fd(SLUICE_MAP_EGRESS_SOURCES_V6), SLUICE_MAP_EGRESS_SOURCES_V6, e.sources_v6); !s)
        return s;
    return e.enabled ? set_enabled(dp, true) : Status{};
}

Status prune_egress_tables(const Datapath& dp, const CompiledEgress& e) {
    if (!e.enabled)
        if (auto s = set_enabled(dp, false); !s) return s;
    if (auto s = prune(dp.map_fd(SLUICE_MAP_EGRESS_SOURCES_V4), SLUICE_MAP_EGRESS_SOURCES_V4, e.sources_v4); !s) return s;
    if (auto s = prune(dp.map_fd(SLUICE_MAP_EGRESS_SOURCES_V6), SLUICE_MAP_EGRESS_SOURCES_V6, e.sources_v6); !s) return s;
    if (auto s = prune(dp.map_fd(SLUICE_MAP_EGRESS_PREFIXES_V4), SLUICE_MAP_EGRESS_PREFIXES_V4, e.prefixes_v4); !s)
        return s;
    return prune(dp.map_fd(SLUICE_MAP_EGRESS_PREFIXES_V6), SLUICE_MAP_EGRESS_PREFIXES_V6, e.prefixes_v6);
}

}  // namespace sluice
