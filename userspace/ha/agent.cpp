#include "ha/agent.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <random>

#include "ha/config_hash.h"
#include "ha/flow_record.h"
#include "loader/map_io.h"

extern "C" {
#include "map_names.h"
}

namespace sluice::ha {
namespace {

constexpr uint64_t kMs = 1000000ull;
// Announcements after a takeover: at once, then this many more, this far
// apart (a switch that missed the first still learns the MAC's new port).
constexpr int kAnnouncementRepeats = 3;
constexpr uint64_t kAnnouncementGapNs = 200 * kMs;
// A bulk sync asked for and not ended within this is asked for again.
constexpr uint64_t kBulkRetryNs = 1000 * kMs;

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void log(const std::string& message) { std::cerr << "sluice: ha: " << message << std::endl; }

// Link up and carrier: what a monitored interface must have.
bool link_running(const std::string& name) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    bool up = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
    close(fd);
    return up;
}

}  // namespace

Agent::Agent(const config::Ha& ha, const config::HaNode& self, const config::HaNode& peer, Datapath& datapath,
             std::map<uint16_t, uint8_t> zone_groups, uint16_t zone_count)
    : ha_(ha), self_(self), dp_(datapath), zone_groups_(std::move(zone_groups)),
      maps_{datapath.map_fd(SLUICE_MAP_SESSIONS_V4), datapath.map_fd(SLUICE_MAP_SESSIONS_V6),
            datapath.map_fd(SLUICE_MAP_NAT_PORTS)},
      applier_(maps_, zone_count) {
    peer_.node = &peer;
    hash_ = config_hash(ha);
    std::random_device rd;
    do boot_id_ = rd(); while (boot_id_ == 0);
    for (const auto& g : ha.groups) {
        Group group;
        group.config = &g;
        group.presence = std::make_unique<VirtualPresence>(g, self.id);
        groups_.push_back(std::move(group));
    }
}

Result<std::unique_ptr<Agent>> Agent::start(const config::Ha& ha, const std::string& node, Datapath& datapath,
                                            std::map<uint16_t, uint8_t> zone_groups, uint16_t zone_count) {
    const config::HaNode* self = ha.find_node(node);
    const config::HaNode* peer = ha.peer_of(node);
    if (!self || !peer) return make_error("HA: node " + node + " is not one of ha.nodes");
    std::unique_ptr<Agent> a(new Agent(ha, *self, *peer, datapath, std::move(zone_groups), zone_count));
    const uint64_t now = monotonic_ns();
    a->started_ns_ = now;
    // Standby first, whatever the pinned maps and interfaces say: a node that
    // crashed while active left its ha_groups entries, MACs and addresses.
    for (auto& g : a->groups_) {
        ha_group_state st{};
        uint32_t key = g.config->id;
        if (bpf_map_update_elem(datapath.map_fd(SLUICE_MAP_HA_GROUPS), &key, &st, BPF_ANY) != 0)
            return errno_error("HA: cannot write " SLUICE_MAP_HA_GROUPS, errno);
        if (auto s = g.presence->release(); !s) return s.error();
        g.since_ns = now;
        g.why = "starting: waiting one hold-time for the peer";
    }
    auto fabric = FabricSocket::open(ha.fabric, self->fabric_address, peer->fabric_address, ha.port);
    if (!fabric) return fabric.error();
    a->fabric_ = std::move(fabric.value());
    std::vector<std::string> link_names;
    for (const auto& g : ha.groups)
        for (const auto& itf : g.interfaces)
            if (std::find(link_names.begin(), link_names.end(), itf.name) == link_names.end())
                link_names.push_back(itf.name);
    for (const auto& name : link_names) {
        auto link = LinkHeartbeat::open(name);
        if (!link) return link.error();
        a->links_.push_back(std::move(link.value()));
    }
    a->ring_ = ring_buffer__new(datapath.map_fd(SLUICE_MAP_HA_EVENTS), &Agent::on_event, a.get(), nullptr);
    if (!a->ring_) return errno_error("HA: cannot read the " SLUICE_MAP_HA_EVENTS " ring buffer", errno);
    // Flow events on while the agent runs: changes the fabric cannot carry
    // are counted (not_sent_no_peer) and repaired by the next bulk sync.
    a->set_sync(true);
    a->heartbeat(now);
    a->beat_thread_ = std::thread([p = a.get()] { p->beat_loop(); });
    log("node " + self->name + " (id " + std::to_string(self->id) + "), peer " + peer->name + " at " +
        peer->fabric_address.text + " over " + ha.fabric + ", " + std::to_string(a->groups_.size()) +
        (a->groups_.size() == 1 ? " group" : " groups") + "; every group standby until elected");
    return a;
}

Agent::~Agent() {
    {
        std::lock_guard<std::mutex> lock(beat_mu_);
        beat_quit_ = true;
    }
    beat_cv_.notify_all();
    if (beat_thread_.joinable()) beat_thread_.join();
    if (ring_) ring_buffer__free(ring_);
}

std::vector<GroupHeartbeat> Agent::beat_groups() const {
    std::vector<GroupHeartbeat> out;
    for (const auto& g : groups_) {
        GroupHeartbeat h;
        h.group = g.config->id;
        h.priority = stopped_ ? 0 : effective_priority(g);
        h.active = g.role == Role::active;
        h.flags = g.releasing ? kGroupReleasing : 0;
        out.push_back(h);
    }
    return out;
}

std::vector<uint8_t> Agent::heartbeat_datagram(const std::vector<GroupHeartbeat>& groups) {
    Message m = header(MessageType::heartbeat);
    m.heartbeat.groups = groups;
    return encode(m);
}

void Agent::beat_loop() {
    // The peer's hold-time is counted against this thread: one that waits
    // behind a busy CPU for longer than that makes a false takeover. The
    // lowest realtime priority is above every ordinary task (corosync and
    // keepalived do the same) and the thread runs for microseconds a beat.
    sched_param rt{};
    rt.sched_priority = sched_get_priority_min(SCHED_FIFO);
    if (int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt); e != 0)
        log(std::string("heartbeats run at normal priority (SCHED_FIFO refused: ") + std::strerror(e) +
            "): a busy machine may delay them past the peer's hold-time");
    const auto interval = ha_.heartbeat_interval;
    std::unique_lock<std::mutex> lock(beat_mu_);
    while (!beat_quit_) {
        if (beat_cv_.wait_for(lock, interval, [this] { return beat_quit_; })) break;
        std::vector<GroupHeartbeat> groups = beat_state_;
        lock.unlock();
        // Priorities now, not as of the last role change: a monitored link
        // that went down must reach the peer within one interval.
        for (size_t i = 0; i < groups.size() && i < groups_.size(); ++i)
            if (groups[i].priority != 0) groups[i].priority = effective_priority(groups_[i]);
        const auto bytes = heartbeat_datagram(groups);
        if (fabric_->send(bytes)) heartbeats_sent_ += 1;
        for (auto& l : links_) (void)l->send(bytes);
        lock.lock();
    }
}

std::vector<int> Agent::fds() const {
    std::vector<int> out{fabric_->fd(), ring_buffer__epoll_fd(ring_)};
    for (const auto& l : links_) out.push_back(l->fd());
    return out;
}

int Agent::on_event(void* ctx, void* data, size_t size) {
    auto* self = static_cast<Agent*>(ctx);
    if (size < sizeof(ha_event)) return 0;
    ha_event e;
    std::memcpy(&e, data, sizeof(e));
    self->changed_.add(e);
    self->counters_.events += 1;
    return 0;
}

void Agent::on_readable() {
    if (stopped_) return;
    const uint64_t now = monotonic_ns();
    for (;;) {
        auto d = fabric_->receive();
        if (d.empty()) break;
        handle(d, true, now);
    }
    for (auto& l : links_)
        for (;;) {
            auto d = l->receive();
            if (d.empty()) break;
            handle(d, false, now);
        }
    drain_events(now);
}

uint8_t Agent::effective_priority(const Group& g) const {
    // No `monitor:` key: the group's own interfaces are monitored.
    if (g.config->monitor.empty()) {
        for (const auto& i : g.config->interfaces)
            if (!link_running(i.name)) return 0;
    }
    for (const auto& m : g.config->monitor)
        if (!link_running(m.interface)) return 0;
    auto it = g.config->priority.find(self_.name);
    return it == g.config->priority.end() ? 0 : it->second;
}

bool Agent::peer_alive(uint64_t now) const {
    const uint64_t hold = static_cast<uint64_t>(ha_.hold_time.count()) * kMs;
    const uint64_t last = std::max(peer_.fabric_ns, peer_.link_ns);
    return last != 0 && now - last < hold;
}

bool Agent::carries(uint8_t group) const {
    for (const auto& g : groups_)
        if (g.config->id == group) return g.role == Role::active;
    return false;
}

uint8_t Agent::group_of(uint16_t zone_in, uint16_t zone_out) const {
    if (auto it = zone_groups_.find(zone_in); it != zone_groups_.end()) return it->second;
    if (auto it = zone_groups_.find(zone_out); it != zone_groups_.end()) return it->second;
    return 0;
}

Message Agent::header(MessageType type) {
    Message m;
    m.header.type = type;
    m.header.node_id = self_.id;
    m.header.seq = seq_.fetch_add(1) + 1;
    m.header.config_hash = hash_;
    m.header.boot_id = boot_id_;
    return m;
}

void Agent::send(const Message& m) {
    if (fabric_->send(encode(m))) {
        counters_.messages_sent += 1;
    } else {
        counters_.send_failed += 1;
    }
}

void Agent::heartbeat(uint64_t) {
    std::vector<GroupHeartbeat> groups = beat_groups();
    {
        std::lock_guard<std::mutex> lock(beat_mu_);
        beat_state_ = groups;
    }
    const auto bytes = heartbeat_datagram(groups);
    if (fabric_->send(bytes)) heartbeats_sent_ += 1;
    for (auto& l : links_) (void)l->send(bytes);
}

void Agent::set_sync(bool on) {
    if (on == sync_on_) return;
    runtime_config cfg{};
    if (!read_runtime_config(dp_.map_fd("runtime_cfg"), cfg)) return;
    cfg.ha_sync = on ? 1 : 0;
    if (write_runtime_config(dp_.map_fd("runtime_cfg"), cfg)) sync_on_ = on;
}

void Agent::set_role(Group& g, const Decision& d, uint64_t now) {
    g.why = d.why;
    if (d.role == g.role) return;
    const Role before = g.role;
    g.role = d.role;
    g.since_ns = now;
    g.transitions += 1;
    g.epoch += 1;
    ha_group_state st{};
    st.active = d.role == Role::active ? 1 : 0;
    st.epoch = g.epoch;
    uint32_t key = g.config->id;
    if (d.role == Role::active) {
        // The flows' idle timers restart now (idle_floor_ns), then
        // forwarding, then the addresses that draw the traffic.
        idle_floor_ns_ = coarse_now_ns();
        if (bpf_map_update_elem(dp_.map_fd(SLUICE_MAP_HA_GROUPS), &key, &st, BPF_ANY) != 0)
            log("group " + g.config->name + ": cannot write " SLUICE_MAP_HA_GROUPS ": " + std::strerror(errno));
        if (auto s = g.presence->take(); !s) {
            counters_.presence_errors += 1;
            log("group " + g.config->name + ": " + s.error().message);
        }
        g.announcements_left = kAnnouncementRepeats;
        g.next_announce_ns = now + kAnnouncementGapNs;
        counters_.takeovers += 1;
    } else {
        if (bpf_map_update_elem(dp_.map_fd(SLUICE_MAP_HA_GROUPS), &key, &st, BPF_ANY) != 0)
            log("group " + g.config->name + ": cannot write " SLUICE_MAP_HA_GROUPS ": " + std::strerror(errno));
        if (before == Role::active) {
            if (auto s = g.presence->release(); !s) {
                counters_.presence_errors += 1;
                log("group " + g.config->name + ": " + s.error().message);
            }
            counters_.releases += 1;
        }
        g.announcements_left = 0;
    }
    (void)dp_.bump_fib_generation();  // cached routes name the old MAC
    log("group " + g.config->name + ": " + to_string(before) + " -> " + to_string(d.role) + " (" + d.why + ")");
    // Tell the peer now, not at the next interval: a switchover waits on it.
    heartbeat(now);
}

void Agent::elect(uint64_t now) {
    const uint64_t hold = static_cast<uint64_t>(ha_.hold_time.count()) * kMs;
    const bool alive = peer_alive(now);
    for (auto& g : groups_) {
        if (!alive) g.releasing = false;  // nobody to hand over to
        GroupInput in;
        in.current = g.role;
        in.priority = effective_priority(g);
        in.node_id = self_.id;
        in.preempt = g.config->preempt;
        in.releasing = g.releasing;
        in.synced = peer_.synced || !alive;
        in.waited = now - started_ns_ >= hold;
        in.peer.alive = alive;
        in.peer.priority = g.peer.priority;
        in.peer.active = g.peer.active != 0;
        in.peer.releasing = (g.peer.flags & kGroupReleasing) != 0;
        in.peer.node_id = peer_.node->id;
        set_role(g, decide(in), now);
    }
}

void Agent::handle(const std::vector<uint8_t>& datagram, bool from_fabric, uint64_t now) {
    Decoded d = decode(datagram.data(), datagram.size());
    if (!d.ok) {
        counters_.rejected[static_cast<size_t>(d.reason)] += 1;
        const std::string why = to_string(d.reason) + (d.detail.empty() ? "" : ": " + d.detail);
        if (why != last_reject_) log("refused a datagram from the peer (" + why + "); nothing written");
        last_reject_ = why;
        return;
    }
    const Message& m = d.message;
    if (m.header.node_id != peer_.node->id) {
        counters_.rejected_wrong_node += 1;
        return;
    }
    if (m.header.config_hash != hash_) {
        counters_.rejected_config_mismatch += 1;
        if (last_reject_ != "config") log("the peer runs another ha: section (its messages are refused)");
        last_reject_ = "config";
        return;
    }
    switch (m.header.type) {
    case MessageType::heartbeat: on_heartbeat(m, from_fabric, now); break;
    case MessageType::sessions:
        if (from_fabric) on_sessions(m);
        break;
    case MessageType::deletes:
        if (from_fabric) on_deletes(m);
        break;
    case MessageType::bulk_request:
        if (from_fabric) answer_bulk(now);
        break;
    case MessageType::bulk_end:
        if (from_fabric) {
            counters_.bulk_ends_received += 1;
            if (!peer_.synced) log("bulk sync from " + peer_.node->name + " done");
            peer_.synced = true;
            elect(now);
        }
        break;
    }
}

void Agent::on_heartbeat(const Message& m, bool from_fabric, uint64_t now) {
    const uint64_t hold = static_cast<uint64_t>(ha_.hold_time.count()) * kMs;
    const bool restarted = peer_.known && m.header.boot_id != peer_.boot_id;
    const bool fabric_returned = from_fabric && (peer_.fabric_ns == 0 || now - peer_.fabric_ns >= hold);
    if (!peer_.known || restarted) log("peer " + peer_.node->name + (restarted ? " restarted" : " is up"));
    peer_.known = true;
    peer_.boot_id = m.header.boot_id;
    if (from_fabric) {
        peer_.fabric_ns = now;
        counters_.heartbeats_fabric += 1;
    } else {
        peer_.link_ns = now;
        counters_.heartbeats_link += 1;
    }
    for (const auto& h : m.heartbeat.groups)
        for (auto& g : groups_)
            if (g.config->id == h.group) {
                g.peer = h;
                // The peer hands the group back: this node's own hand-over is over.
                if (h.flags & kGroupReleasing) g.releasing = false;
            }
    if (restarted || fabric_returned) {
        // Its table may lack what changed meanwhile: ask for everything.
        peer_.synced = false;
        peer_.bulk_requested_ns = 0;
    }
    if (from_fabric && !peer_.synced && (peer_.bulk_requested_ns == 0 || now - peer_.bulk_requested_ns >= kBulkRetryNs)) {
        send(header(MessageType::bulk_request));
        counters_.bulk_requests_sent += 1;
        peer_.bulk_requested_ns = now;
    }
    elect(now);
}

void Agent::on_sessions(const Message& m) {
    const uint64_t session_now = coarse_now_ns();
    runtime_config cfg{};
    (void)read_runtime_config(dp_.map_fd("runtime_cfg"), cfg);
    for (const auto& r : m.flows) {
        counters_.flows_received += 1;
        if (carries(group_of(r.zone_in, r.zone_out))) {
            counters_.ignored_active += 1;
            continue;
        }
        if (auto s = applier_.apply(r, session_now, cfg.config_generation); !s) {
            counters_.apply_failed += 1;
            if (last_reject_ != s.error().message) log("sync: " + s.error().message);
            last_reject_ = s.error().message;
        }
    }
}

void Agent::on_deletes(const Message& m) {
    for (const auto& k : m.deletes) {
        counters_.deletes_received += 1;
        SessionEntry e = entry_key_of(k);
        if (read_session_entry(maps_.sessions_v4, maps_.sessions_v6, e) &&
            carries(group_of(e.value.zone_in, e.value.zone_out))) {
            counters_.ignored_active += 1;
            continue;
        }
        if (auto s = applier_.remove(k); !s) counters_.apply_failed += 1;
    }
}

void Agent::send_changes(const Changes& changes) {
    Changes mine;
    mine.deletes = changes.deletes;
    for (const auto& f : changes.flows)
        if (carries(group_of(f.zone_in, f.zone_out))) mine.flows.push_back(f);
    counters_.unmovable += changes.unmovable;
    for (const auto& m0 : pack(mine)) {
        Message m = m0;
        Message h = header(m.header.type);
        m.header = h.header;
        send(m);
    }
    counters_.flows_sent += mine.flows.size();
    counters_.deletes_sent += mine.deletes.size();
}

void Agent::answer_bulk(uint64_t) {
    counters_.bulk_requests_answered += 1;
    auto all = read_all(maps_, coarse_now_ns());
    if (all) {
        size_t before = counters_.flows_sent;
        Changes c = std::move(all.value());
        c.deletes.clear();
        send_changes(c);
        counters_.bulk_flows_sent += counters_.flows_sent - before;
    } else {
        log("bulk sync: " + all.error().message);
    }
    send(header(MessageType::bulk_end));
}

void Agent::drain_events(uint64_t now) {
    (void)now;
    ring_buffer__consume(ring_);
    if (changed_.empty()) return;
    auto keys = changed_.take();
    if (!peer_.fabric_alive) {
        counters_.not_sent_no_peer += keys.size();
        return;
    }
    send_changes(read_changes(maps_, keys, coarse_now_ns()));
}

void Agent::flow_expired(const SessionEntry& entry) {
    if (stopped_ || !carries(group_of(entry.value.zone_in, entry.value.zone_out))) return;
    if (entry.value.flags & SESSION_F_REPLY) return;  // its initiator entry names the flow
    if (!peer_.fabric_alive) {
        counters_.not_sent_no_peer += 1;
        return;
    }
    Changes c;
    c.deletes.push_back(key_of(entry));
    send_changes(c);
}

bool Agent::gc_on_hold() const {
    if (!peer_.fabric_alive) return false;
    for (const auto& g : groups_)
        if (g.role == Role::active) return false;
    return true;
}

uint64_t Agent::tick() {
    if (stopped_) return 1000 * kMs;
    // What arrived while the loop was busy first: a heartbeat queued during
    // a reload is not a silent peer.
    on_readable();
    const uint64_t now = monotonic_ns();
    const uint64_t hold = static_cast<uint64_t>(ha_.hold_time.count()) * kMs;
    const bool fabric_alive = peer_.fabric_ns != 0 && now - peer_.fabric_ns < hold;
    if (fabric_alive != peer_.fabric_alive) {
        log(std::string("fabric to ") + peer_.node->name + (fabric_alive ? " is up" : " is silent: session sync stops"));
        peer_.fabric_alive = fabric_alive;
    }
    elect(now);
    for (auto& g : groups_)
        if (g.role == Role::active && g.announcements_left > 0 && now >= g.next_announce_ns) {
            (void)g.presence->announce();
            g.announcements_left -= 1;
            g.next_announce_ns = now + kAnnouncementGapNs;
        }
    // Elections need a look at least every interval, and the instant the
    // peer's hold-time runs out (a crash is detected then, not up to an
    // interval later).
    uint64_t next = now + static_cast<uint64_t>(ha_.heartbeat_interval.count()) * kMs;
    const uint64_t last = std::max(peer_.fabric_ns, peer_.link_ns);
    if (last != 0 && last + hold > now) next = std::min(next, last + hold);
    for (const auto& g : groups_)
        if (g.announcements_left > 0) next = std::min(next, g.next_announce_ns);
    const uint64_t t = monotonic_ns();
    return next <= t ? 0 : next - t;
}

Result<std::string> Agent::failover(const std::string& name) {
    const uint64_t now = monotonic_ns();
    if (!peer_alive(now))
        return make_error("the peer " + peer_.node->name + " is not answering: there is nobody to hand over to");
    std::vector<Group*> chosen;
    for (auto& g : groups_)
        if (name.empty() ? g.role == Role::active : g.config->name == name) chosen.push_back(&g);
    if (chosen.empty()) {
        if (!name.empty()) {
            std::string known;
            for (const auto& g : groups_) known += (known.empty() ? "" : ", ") + g.config->name;
            return make_error("no group " + name + " (groups: " + known + ")");
        }
        return make_error("node " + self_.name + " carries no group; run `sluice ha failover` on " + peer_.node->name);
    }
    std::string done;
    for (Group* g : chosen) {
        if (g->role != Role::active)
            return make_error("node " + self_.name + " does not carry group " + g->config->name + " (it is " +
                              to_string(g->role) + "); run `sluice ha failover` on " + peer_.node->name);
        if (g->peer.priority == 0)
            return make_error("the peer cannot take group " + g->config->name + ": a monitored interface of " +
                              peer_.node->name + " is down");
    }
    for (Group* g : chosen) {
        g->releasing = true;
        done += (done.empty() ? "" : ", ") + g->config->name;
    }
    log("failover asked for: handing " + done + " to " + peer_.node->name);
    heartbeat(now);
    return "handing " + done + " over to " + peer_.node->name;
}

void Agent::stop() {
    if (stopped_) return;
    const uint64_t now = monotonic_ns();
    for (auto& g : groups_) set_role(g, {Role::standby, "stopping"}, now);
    stopped_ = true;
    heartbeat(now);  // priority 0 everywhere: the peer takes over at once
    set_sync(false);
}

nlohmann::json Agent::status() const {
    const uint64_t now = monotonic_ns();
    auto ago = [now](uint64_t t) -> nlohmann::json {
        if (t == 0) return nullptr;
        return static_cast<double>(now - t) / 1e6;
    };
    // The same instants on the wall clock (Unix seconds), to be laid beside
    // other programs' timestamps (ping -D, iperf3) without the reader's delay.
    timespec wall{};
    clock_gettime(CLOCK_REALTIME, &wall);
    const double wall_now = static_cast<double>(wall.tv_sec) + static_cast<double>(wall.tv_nsec) / 1e9;
    auto at = [now, wall_now](uint64_t t) -> nlohmann::json {
        if (t == 0) return nullptr;
        return wall_now - static_cast<double>(now - t) / 1e9;
    };
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& g : groups_) {
        groups.push_back({{"name", g.config->name},
                          {"id", g.config->id},
                          {"role", to_string(g.role)},
                          {"why", g.why},
                          {"priority", g.config->priority.at(self_.name)},
                          {"effective_priority", effective_priority(g)},
                          {"preempt", g.config->preempt},
                          {"releasing", g.releasing},
                          {"since_ms", ago(g.since_ns)},
                          {"changed_at", at(g.since_ns)},
                          {"transitions", g.transitions},
                          {"peer", {{"active", g.peer.active != 0},
                                    {"priority", g.peer.priority},
                                    {"releasing", (g.peer.flags & kGroupReleasing) != 0}}}});
    }
    const ApplyCounters& a = applier_.counters();
    nlohmann::json rejected = nlohmann::json::object();
    for (size_t i = 0; i < static_cast<size_t>(RejectReason::count_); ++i)
        rejected[to_string(static_cast<RejectReason>(i))] = counters_.rejected[i];
    rejected["wrong-node"] = counters_.rejected_wrong_node;
    rejected["config-mismatch"] = counters_.rejected_config_mismatch;
    rejected["not-from-peer"] = fabric_->not_from_peer();
    const AgentCounters& c = counters_;
    return {{"node", self_.name},
            {"node_id", self_.id},
            {"fabric", ha_.fabric},
            {"peer", {{"name", peer_.node->name},
                      {"id", peer_.node->id},
                      {"address", peer_.node->fabric_address.text},
                      {"alive", peer_alive(now)},
                      {"fabric_alive", peer_.fabric_alive},
                      {"last_heartbeat_fabric_ms", ago(peer_.fabric_ns)},
                      {"last_heartbeat_link_ms", ago(peer_.link_ns)},
                      {"synced", peer_.synced}}},
            {"groups", groups},
            {"heartbeats", {{"sent", heartbeats_sent_.load()}, {"received_fabric", c.heartbeats_fabric},
                            {"received_link", c.heartbeats_link}}},
            {"sync", {{"enabled", sync_on_},
                      {"backlog", changed_.size()},
                      {"events", c.events},
                      {"flows_sent", c.flows_sent},
                      {"deletes_sent", c.deletes_sent},
                      {"messages_sent", c.messages_sent},
                      {"send_failed", c.send_failed},
                      {"not_sent_no_peer", c.not_sent_no_peer},
                      {"unmovable", c.unmovable},
                      {"flows_received", c.flows_received},
                      {"flows_written", a.flows_written},
                      {"flows_refused", a.flows_refused},
                      {"flows_replaced", a.flows_replaced},
                      {"deletes_received", c.deletes_received},
                      {"deletes_done", a.deletes_done},
                      {"deletes_unknown", a.deletes_unknown},
                      {"ignored_active", c.ignored_active},
                      {"apply_failed", c.apply_failed},
                      {"bulk_requests_sent", c.bulk_requests_sent},
                      {"bulk_requests_answered", c.bulk_requests_answered},
                      {"bulk_flows_sent", c.bulk_flows_sent},
                      {"bulk_ends_received", c.bulk_ends_received}}},
            {"rejected", rejected},
            {"takeovers", c.takeovers},
            {"releases", c.releases},
            {"presence_errors", c.presence_errors}};
}

std::string Agent::summary() const {
    std::string out;
    for (const auto& g : groups_) out += (out.empty() ? "" : ", ") + g.config->name + " " + to_string(g.role);
    return out;
}

}  // namespace sluice::ha
