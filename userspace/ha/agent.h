// The HA agent (docs/ha.md): what `sluice run` does for a node of a pair.
// It sends heartbeats on the fabric and the data links, decides each
// group's role (election.h) after every heartbeat and timer, writes the
// decision into the datapath (ha_groups), moves the virtual MACs and
// addresses (virtual_presence.h), sends the flows the datapath reports on
// ha_events to the peer, writes the peer's flows into this node's maps, and
// answers bulk syncs. One thread: the daemon's loop polls fds() and calls
// on_readable() and tick(); nothing here blocks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "config/ha_config.h"
#include "ha/election.h"
#include "ha/fabric_socket.h"
#include "ha/link_heartbeat.h"
#include "ha/sync_apply.h"
#include "ha/sync_source.h"
#include "ha/virtual_presence.h"
#include "loader/datapath.h"
#include "loader/session_table.h"

struct ring_buffer;

namespace sluice::ha {

struct AgentCounters {
    uint64_t heartbeats_fabric = 0, heartbeats_link = 0;
    uint64_t events = 0;            // ha_events records read
    uint64_t flows_sent = 0, deletes_sent = 0, messages_sent = 0, send_failed = 0;
    uint64_t unmovable = 0;         // flows that stay on this node (inspected, spliced, SYN proxy)
    uint64_t not_sent_no_peer = 0;  // changes while the fabric was silent (the next bulk sync repairs them)
    uint64_t flows_received = 0, deletes_received = 0;
    uint64_t ignored_active = 0;    // the peer's flows of a group this node carries
    uint64_t apply_failed = 0;      // a map write that failed
    uint64_t bulk_requests_sent = 0, bulk_requests_answered = 0, bulk_flows_sent = 0, bulk_ends_received = 0;
    uint64_t rejected[static_cast<size_t>(RejectReason::count_)] = {};
    uint64_t rejected_wrong_node = 0, rejected_config_mismatch = 0;
    uint64_t takeovers = 0, releases = 0, presence_errors = 0;
};

class Agent {
public:
    // Opens the fabric socket and the link heartbeats, sets every group
    // standby (ha_groups zeroed, no virtual MAC or address here) and turns
    // the datapath's flow events on. `zone_groups`: zone id -> group id.
    static Result<std::unique_ptr<Agent>> start(const config::Ha& ha, const std::string& node, Datapath& datapath,
                                                std::map<uint16_t, uint8_t> zone_groups, uint16_t zone_count);
    ~Agent();
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    std::vector<int> fds() const;
    // Reads whatever is queued on every fd (heartbeats, sync, flow events).
    void on_readable();
    // Heartbeats, elections, announcements that are due; returns the
    // nanoseconds until the next one is due, the peer's hold-time expiry
    // included (to the nanosecond: a takeover waits for no rounding).
    uint64_t tick();

    // Planned switchover: this node hands `group` ("" = every group it
    // carries) to the peer. Refused when the node does not carry it or the
    // peer is not there to take it.
    Result<std::string> failover(const std::string& group);
    // Graceful stop: every group standby, the peer told at once.
    void stop();

    // Whether the session GC must leave the tables alone: this node carries
    // no group and the peer is alive, so the peer's deletes say when a flow ends.
    bool gc_on_hold() const;
    // The session clock (coarse_now_ns) at this node's last takeover, 0 if
    // none: synced flows carry the time of their last change on the old
    // node, so the GC counts them as seen then (SessionGc::set_idle_floor)
    // instead of expiring the live ones at once. O(1) at takeover: no walk
    // over the table before forwarding starts.
    uint64_t idle_floor_ns() const { return idle_floor_ns_; }
    // The GC removed a flow (this node carries its group): the peer removes it too.
    void flow_expired(const SessionEntry& entry);

    nlohmann::json status() const;
    // One line per group, for `show stats`.
    std::string summary() const;

private:
    struct Group {
        const config::HaGroup* config = nullptr;
        Role role = Role::init;
        std::string why;
        bool releasing = false;
        uint64_t since_ns = 0;
        uint64_t transitions = 0;
        std::unique_ptr<VirtualPresence> presence;
        GroupHeartbeat peer;            // the peer's last word on the group
        uint32_t epoch = 0;
        int announcements_left = 0;
        uint64_t next_announce_ns = 0;
    };
    struct Peer {
        const config::HaNode* node = nullptr;
        uint64_t fabric_ns = 0, link_ns = 0;   // last heartbeat per path (0: never)
        uint32_t boot_id = 0;
        bool known = false;
        bool synced = false;            // its bulk sync arrived since it (re)appeared on the fabric
        bool fabric_alive = false;
        uint64_t bulk_requested_ns = 0;
    };

    Agent(const config::Ha& ha, const config::HaNode& self, const config::HaNode& peer, Datapath& datapath,
          std::map<uint16_t, uint8_t> zone_groups, uint16_t zone_count);

    uint8_t effective_priority(const Group& g) const;
    bool peer_alive(uint64_t now) const;
    // Sends a heartbeat now (a role changed) and gives the beat thread the
    // groups' new state.
    void heartbeat(uint64_t now);
    std::vector<uint8_t> heartbeat_datagram(const std::vector<GroupHeartbeat>& groups);
    std::vector<GroupHeartbeat> beat_groups() const;
    // The beat thread: heartbeats every interval even while the daemon's
    // loop is busy (a reload compiling, a bulk sync), so a busy node is
    // never taken for a dead one.
    void beat_loop();
    void elect(uint64_t now);
    void set_role(Group& g, const Decision& d, uint64_t now);
    void handle(const std::vector<uint8_t>& datagram, bool from_fabric, uint64_t now);
    void on_heartbeat(const Message& m, bool from_fabric, uint64_t now);
    void on_sessions(const Message& m);
    void on_deletes(const Message& m);
    void answer_bulk(uint64_t now);
    void drain_events(uint64_t now);
    void send(const Message& m);
    void send_changes(const Changes& changes);
    void set_sync(bool on);
    // The group a flow belongs to (its ingress zone's, else its egress zone's), 0: none.
    uint8_t group_of(uint16_t zone_in, uint16_t zone_out) const;
    bool carries(uint8_t group) const;
    Message header(MessageType type);
    static int on_event(void* ctx, void* data, size_t size);

    const config::Ha& ha_;
    const config::HaNode& self_;
    Datapath& dp_;
    std::map<uint16_t, uint8_t> zone_groups_;
    SessionMaps maps_;
    SyncApplier applier_;
    uint64_t idle_floor_ns_ = 0;
    std::unique_ptr<FabricSocket> fabric_;
    std::vector<std::unique_ptr<LinkHeartbeat>> links_;
    ::ring_buffer* ring_ = nullptr;
    ChangedKeys changed_;
    std::vector<Group> groups_;
    Peer peer_;
    uint32_t hash_ = 0, boot_id_ = 0;
    std::atomic<uint32_t> seq_{0};
    std::atomic<uint64_t> heartbeats_sent_{0};
    uint64_t started_ns_ = 0;
    std::mutex beat_mu_;
    std::condition_variable beat_cv_;
    std::vector<GroupHeartbeat> beat_state_;  // what the beat thread sends (priority filled in there)
    bool beat_quit_ = false;
    std::thread beat_thread_;
    bool sync_on_ = false;
    bool stopped_ = false;
    AgentCounters counters_;
    std::string last_reject_;
};

}  // namespace sluice::ha
