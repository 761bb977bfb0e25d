// Expires idle sessions. Gated on activity: it walks the tables only when a
// session may have expired (the earliest expiry seen last walk has passed) or
// new sessions were created since, and then at most once a second: the daemon
// loop may wake many times a second (flow-log draining, HA, control
// requests), a walk of a busy table costs milliseconds, and on a busy table
// some flow's expiry is always due; a flow is removed within a second of its
// timeout. The walk is a batched dump, so the kernel
// skips empty buckets and no syscall is spent per empty slot. Removing a
// source-translated flow also releases its port reservation (nat_ports), and
// a flow counted against its source's session limit (maps/screen.h) is
// counted in src_released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/result.h"

namespace sluice {

struct ExpiredFlow;
struct SessionEntry;

class SessionGc {
public:
    // nat_ports_fd and src_released_fd may be -1 (nothing to release there).
    SessionGc(int sessions_v4_fd, int sessions_v6_fd, int runtime_cfg_fd, int stats_fd, int nat_ports_fd,
              int src_released_fd = -1);

    // Collects if due; returns how many flows were removed.
    Result<size_t> maybe_collect(uint64_t now_ns);
    // Walks unconditionally.
    Result<size_t> collect(uint64_t now_ns);
    uint64_t walks() const { return walks_; }
    // Flows last seen before ns count as seen then (plan_expiry).
    void set_idle_floor(uint64_t ns) { idle_floor_ns_ = ns; }
    // Called for each entry removed (both of a flow), after it is gone: the
    // HA agent tells the standby.
    void on_removed(std::function<void(const SessionEntry&)> f) { on_removed_ = std::move(f); }
    // Called once per flow removed, with its initiator (or the one entry
    // left) and the other direction if present: the flow log's close.
    void on_flow_removed(std::function<void(const SessionEntry&, const SessionEntry*, uint64_t now_ns)> f) {
        on_flow_removed_ = std::move(f);
    }

private:
    Status release(const ExpiredFlow& flow);
    Status release_sources(const std::vector<ExpiredFlow>& expired);

    int fd_v4_, fd_v6_, cfg_fd_, stats_fd_, nat_ports_fd_, src_released_fd_;
    uint64_t next_due_ns_ = 0;
    uint64_t last_created_ = UINT64_MAX;
    uint64_t last_walk_ns_ = 0;
    uint64_t walks_ = 0;
    size_t last_dump_size_ = 0;  // entries the last walk saw: room for the next dump
    uint64_t idle_floor_ns_ = 0;
    std::function<void(const SessionEntry&)> on_removed_;
    std::function<void(const SessionEntry&, const SessionEntry*, uint64_t)> on_flow_removed_;
};

}  // namespace sluice
