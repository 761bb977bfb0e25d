#include "daemon/session_gc.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "loader/map_io.h"
#include "loader/session_table.h"

namespace sluice {
namespace {

// Never idle longer than this between walks while sessions exist, so a
// changed timeout in a reloaded config takes effect.
constexpr uint64_t kMaxWalkIntervalNs = 30ull * 1000000000ull;

}  // namespace

SessionGc::SessionGc(int v4, int v6, int cfg, int stats) : fd_v4_(v4), fd_v6_(v6), cfg_fd_(cfg), stats_fd_(stats) {}

Result<size_t> SessionGc::maybe_collect(uint64_t now) {
    uint64_t created = 0;
    if (auto counters = read_percpu_counters(stats_fd_, STAT_REASON_COUNT); counters.ok())
        created = counters.value()[STAT_SESSION_CREATED];
    if (created == last_created_ && now < next_due_ns_) return size_t{0};
    last_created_ = created;
    return collect(now);
}

Result<size_t> SessionGc::collect(uint64_t now) {
    ++walks_;
    runtime_config cfg{};
    if (auto s = read_runtime_config(cfg_fd_, cfg); !s) return s.error();
    auto dumped = dump_sessions(fd_v4_, fd_v6_);
    if (!dumped) return dumped.error();
    auto& entries = dumped.value();

    std::unordered_map<std::string, size_t> index;
    index.reserve(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) index.emplace(key_bytes(entries[i]), i);

    size_t removed = 0;
    uint64_t next_due = UINT64_MAX;
    for (size_t i = 0; i < entries.size(); ++i) {
        const SessionEntry& e = entries[i];
        const SessionEntry* peer = nullptr;
        auto it = index.find(key_bytes(reverse_of(e)));
        if (it != index.end()) peer = &entries[it->second];
        // Each flow is judged once, from its initiator entry (or alone if orphaned).
        if ((e.value.flags & SESSION_F_REPLY) && peer) continue;

        uint64_t last = e.value.last_seen_ns;
        if (peer) last = std::max<uint64_t>(last, peer->value.last_seen_ns);
        uint8_t state = std::max<uint8_t>(e.value.tcp_state, peer ? peer->value.tcp_state : uint8_t{0});
        session_value probe = e.value;
        probe.tcp_state = state;
        uint64_t timeout = cfg.timeout_ns[timeout_class_of(probe, e.protocol)];
        if (timeout == 0) timeout = 60ull * 1000000000ull;
        if (now >= last && now - last >= timeout) {
            if (auto s = delete_session_entry(fd_v4_, fd_v6_, e); !s) return s.error();
            if (peer) {
                if (auto s = delete_session_entry(fd_v4_, fd_v6_, *peer); !s) return s.error();
            }
            ++removed;
        } else {
            next_due = std::min(next_due, last + timeout);
        }
    }
    next_due_ns_ = next_due == UINT64_MAX ? UINT64_MAX : std::min(next_due, now + kMaxWalkIntervalNs);
    return removed;
}

}  // namespace sluice
