#include "loader/session_maps_size.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "config/session_table_size.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {
namespace {

constexpr const char* kSessionMaps[] = {SLUICE_MAP_SESSIONS_V4, SLUICE_MAP_SESSIONS_V6};

Result<uint32_t> pinned_max_entries(const std::string& path) {
    int fd = bpf_obj_get(path.c_str());
    if (fd < 0) return make_error("cannot open pinned map " + path + ": " + std::strerror(errno));
    auto entries = map_max_entries(fd);
    close(fd);
    return entries;
}

std::string sessions_text(uint32_t entries) {
    return std::to_string(entries / 2) + " sessions per family (" + std::to_string(entries) + " entries)";
}

}  // namespace

Result<uint32_t> map_max_entries(int fd) {
    bpf_map_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
        return make_error(std::string("cannot read map info: ") + std::strerror(errno));
    return info.max_entries;
}

Status size_session_maps(bpf_object* obj, uint32_t sessions, const std::string& pin_dir, const std::string& origin) {
    const uint32_t wanted = config::session_map_entries(sessions);
    for (const char* name : kSessionMaps) {
        if (!pin_dir.empty()) {
            const std::string path = pin_dir + "/" + name;
            std::error_code ec;
            if (std::filesystem::exists(path, ec)) {
                auto pinned = pinned_max_entries(path);
                if (!pinned) return pinned.error();
                if (pinned.value() != wanted)
                    return make_error(
                        "the pinned session table " + path + " holds " + sessions_text(pinned.value()) +
                        "; the config asks for " + sessions_text(wanted) + " (" + origin +
                        "). A session table cannot be resized while it exists: `sluice down` "
                        "removes it, dropping every session, and the next `sluice run` creates it at the new "
                        "size; or set limits.sessions back to " + std::to_string(pinned.value() / 2));
            }
        }
        bpf_map* map = bpf_object__find_map_by_name(obj, name);
        if (!map) return make_error(std::string("the BPF object has no map ") + name);
        if (int err = bpf_map__set_max_entries(map, wanted); err != 0)
            return make_error(std::string("cannot size map ") + name + ": " + std::strerror(-err));
    }
    return {};
}

Status cap_state_maps(bpf_object* obj, uint32_t cap, const std::string& pin_dir) {
    if (cap == 0 || !pin_dir.empty()) return {};
    bpf_map* map;
    bpf_object__for_each_map(map, obj) {
        const std::string name = bpf_map__name(map);
        if (name == SLUICE_MAP_SESSIONS_V4 || name == SLUICE_MAP_SESSIONS_V6) continue;
        switch (bpf_map__type(map)) {
            case BPF_MAP_TYPE_HASH:
            case BPF_MAP_TYPE_PERCPU_HASH:
            case BPF_MAP_TYPE_LRU_HASH:
            case BPF_MAP_TYPE_LRU_PERCPU_HASH:
                break;
            default:
                continue;
        }
        if (bpf_map__max_entries(map) <= cap) continue;
        if (int err = bpf_map__set_max_entries(map, cap); err != 0)
            return make_error("cannot size map " + name + ": " + std::strerror(-err));
    }
    return {};
}

Result<uint32_t> pinned_session_capacity(const std::string& pin_dir) {
    auto entries = pinned_max_entries(pin_dir + "/" SLUICE_MAP_SESSIONS_V4);
    if (!entries) return entries.error();
    return entries.value() / 2;
}

}  // namespace sluice
