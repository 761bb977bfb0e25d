#include "daemon/session_gc.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <tuple>

#include "daemon/session_expiry.h"
#include "loader/map_io.h"
#include "loader/nat_reservations.h"
#include "loader/session_table.h"

namespace sluice {
namespace {

// Never idle longer than this between walks while sessions exist, so a
// changed timeout in a reloaded config takes effect.
constexpr uint64_t kMaxWalkIntervalNs = 30ull * 1000000000ull;
// The least time between two walks: on a busy table the earliest expiry is
// always due (flows in time-wait), and the loop may wake every few ms.
constexpr uint64_t kMinWalkSpacingNs = 1000000000ull;

}  // namespace

SessionGc::SessionGc(int v4, int v6, int cfg, int stats, int nat_ports, int src_released)
    : fd_v4_(v4), fd_v6_(v6), cfg_fd_(cfg), stats_fd_(stats), nat_ports_fd_(nat_ports),
      src_released_fd_(src_released) {}

Result<size_t> SessionGc::maybe_collect(uint64_t now) {
    if (walks_ && now - last_walk_ns_ < kMinWalkSpacingNs) return size_t{0};
    uint64_t created = 0;
    if (auto counter = read_stat_counter(stats_fd_, STAT_SESSION_CREATED); counter.ok())
        created = counter.value().packets;
    if (created == last_created_ && now < next_due_ns_) return size_t{0};
    last_created_ = created;
    return collect(now);
}

Status SessionGc::release(const ExpiredFlow& f) {
    if (!f.reservation || nat_ports_fd_ < 0) return {};
    if (f.reservation_unconfirmed) {
        auto held = lookup_reservation(nat_ports_fd_, *f.reservation);
        if (!held || !reservation_belongs_to(*held, *f.entry)) return {};
    }
    return release_reservation(nat_ports_fd_, *f.reservation);
}

// The GC is src_released's only writer, so read-add-write is safe; the
// datapath counts its own side in src_limits with atomic adds.
Status SessionGc::release_sources(const std::vector<ExpiredFlow>& expired) {
    if (src_released_fd_ < 0) return {};
    std::map<std::tuple<uint16_t, uint8_t, std::array<uint32_t, 4>>, uint64_t> released;
    for (const ExpiredFlow& f : expired) {
        const session_value& v = f.entry->value;
        if (!(v.flags & SESSION_F_SOURCE_COUNTED) || (v.flags & SESSION_F_REPLY)) continue;
        std::array<uint32_t, 4> addr{};
        std::copy(std::begin(f.entry->src_addr), std::end(f.entry->src_addr), addr.begin());
        released[{v.zone_in, f.entry->family, addr}] += 1;
    }
    for (const auto& [id, n] : released) {
        address_limit_key k{};
        k.zone_id = std::get<0>(id);
        k.family = std::get<1>(id);
        std::copy(std::get<2>(id).begin(), std::get<2>(id).end(), k.addr);
        uint64_t total = 0;
        bpf_map_lookup_elem(src_released_fd_, &k, &total);  // absent: 0
        total += n;
        if (bpf_map_update_elem(src_released_fd_, &k, &total, BPF_ANY) != 0)
            return map_error("cannot write", SLUICE_MAP_SRC_RELEASED, errno);
    }
    return {};
}

Result<size_t> SessionGc::collect(uint64_t now) {
    ++walks_;
    last_walk_ns_ = now;
    runtime_config cfg{};
    if (auto s = read_runtime_config(cfg_fd_, cfg); !s) return s.error();
    auto dumped = dump_sessions(fd_v4_, fd_v6_, last_dump_size_ + last_dump_size_ / 8);
    if (!dumped) return dumped.error();
    last_dump_size_ = dumped.value().size();

    ExpiryPlan plan = plan_expiry(dumped.value(), cfg, now, idle_floor_ns_);
    std::vector<const SessionEntry*> doomed;
    doomed.reserve(plan.expired.size() * 2);
    for (const ExpiredFlow& f : plan.expired) {
        doomed.push_back(f.entry);
        if (f.peer) doomed.push_back(f.peer);
    }
    if (auto s = delete_session_entries(fd_v4_, fd_v6_, doomed); !s) return s.error();
    for (const ExpiredFlow& f : plan.expired) {
        // Only after both entries are gone: a packet of this flow arriving in
        // between still finds its session and never a free port.
        if (auto s = release(f); !s) return s.error();
        if (on_removed_) {
            on_removed_(*f.entry);
            if (f.peer) on_removed_(*f.peer);
        }
        if (on_flow_removed_) on_flow_removed_(*f.entry, f.peer, now);
    }
    if (auto s = release_sources(plan.expired); !s) return s.error();
    // The plan cannot see a flow's state change after the walk: a FIN or RST
    // moves it to the closing or time-wait timeout, which may be shorter
    // than what was planned. Walking at least that often removes (and
    // logs) a closed flow within that timeout of when it could have gone.
    uint64_t interval = kMaxWalkIntervalNs;
    for (int t : {TIMEOUT_TCP_CLOSING, TIMEOUT_TCP_TIME_WAIT})
        if (cfg.timeout_ns[t]) interval = std::min<uint64_t>(interval, cfg.timeout_ns[t]);
    uint64_t next_due = plan.next_due_ns;
    next_due_ns_ = next_due == UINT64_MAX ? UINT64_MAX : std::min(next_due, now + interval);
    return plan.expired.size();
}

}  // namespace sluice
