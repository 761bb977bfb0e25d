#include "daemon/daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "config/load_config.h"
#include "ha/agent.h"
#include "ha/node_identity.h"
#include "daemon/config_applier.h"
#include "daemon/control_server.h"
#include "daemon/daemon_log.h"
#include "daemon/egress_host.h"
#include "daemon/inspection_host.h"
#include "daemon/interface_attachments.h"
#include "daemon/nat_address_sync.h"
#include "daemon/netlink_watcher.h"
#include "daemon/session_gc.h"
#include "daemon/state_file.h"
#include "daemon/state_publisher.h"
#include "loader/datapath.h"
#include "loader/instance_paths.h"
#include "loader/map_io.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {
namespace {

// How often the loop's housekeeping runs when nothing asks for it sooner:
// the inspection stage's load check, learned egress addresses' expiry, the
// capture owner's liveness and the metrics snapshot.
constexpr uint64_t kHousekeepingIntervalNs = 1'000'000'000;

// The main loop's poll slots: four fixed ones, then the HA agent's sockets.
constexpr size_t kSignalSlot = 0, kNetlinkSlot = 1, kControlSlot = 2, kFlowEventsSlot = 3, kAgentSlots = 4;

// The parts a running daemon is made of, each with one job; they exist only
// once the datapath is open, since each of them works on it.
struct Parts {
    explicit Parts(std::unique_ptr<Datapath> dp, const std::string& config_path, const InstancePaths& paths)
        : datapath(std::move(dp)), attachments(*datapath), inspection(*datapath, paths), egress(*datapath),
          nat(*datapath), observe(*datapath, paths),
          applier(config_path, *datapath, attachments, inspection, egress, nat, observe) {
        egress.on_policy_change([this](std::shared_ptr<const config::Egress> p) { inspection.update_egress_policy(p); });
    }
    std::unique_ptr<Datapath> datapath;  // the BPF object, its pins and its maps
    InterfaceAttachments attachments;    // programs on the config's interfaces
    InspectionHost inspection;           // the inspection stage and ruleset ids
    EgressHost egress;                   // the egress policy's DNS proxy and learned addresses
    NatAddressSync nat;                  // nat_ifaddrs and accept_local
    ObservabilityHost observe;           // /metrics and the flow log
    ConfigApplier applier;               // config file -> all of the above
    std::unique_ptr<ha::Agent> agent;    // the HA pair's agent, when the file has ha:
};

class Daemon {
public:
    explicit Daemon(RunOptions options) : options_(std::move(options)) {}
    int run();

private:
    void publish();
    control::Reply reload();
    control::Reply hold_stage(bool hold);
    control::Reply answer(const control::Request& request);
    // Stops the stage and takes the programs off the interfaces.
    void shut_down();
    void serve();

    Status start_agent();
    control::Reply ha_status();
    control::Reply egress_change(const control::Request& request);
    control::Reply ha_failover(const std::string& group);

    RunOptions options_;
    std::string node_;       // this node's name in the ha: pair ("" without one)
    config::Ha ha_;          // the ha: section as started (a reload cannot change it)
    InstancePaths paths_;
    std::unique_ptr<Parts> parts_;
    std::unique_ptr<control::ControlServer> control_;
    state::LastReload last_reload_;
    uint64_t reloads_ = 0;
    uint64_t reload_failures_ = 0;
};

state::PublishedState state_of(const RunOptions& options, const InstancePaths& paths, const Parts& parts,
                               uint64_t reloads, const state::LastReload& last_reload) {
    return published_state(StateSources{.instance = options.instance,
                                        .config_path = options.config_path,
                                        .pin_dir = paths.pin_dir,
                                        .datapath = *parts.datapath,
                                        .reloads = reloads,
                                        .last_reload = last_reload,
                                        .applied = parts.applier.applied(),
                                        .attachments = parts.attachments,
                                        .nat = parts.nat,
                                        .inspection = parts.inspection,
                                        .egress = parts.egress});
}

void Daemon::publish() {
    if (auto s = write_state(paths_.state_file(), state_of(options_, paths_, *parts_, reloads_, last_reload_)); !s)
        daemon_log(s.error().message);
}

control::Reply Daemon::reload() {
    ++reloads_;
    Status s = parts_->applier.apply(false);
    control::Reply reply;
    reply.ok = s.ok();
    if (s) {
        last_reload_ = {.ok = true, .message = ""};
        reply.message = "reloaded " + options_.config_path;
        for (const auto& w : parts_->applier.warnings()) reply.message += "; warning: " + w;
        daemon_log(reply.message);
    } else {
        // The running config stays in force: apply() flips nothing on error.
        last_reload_ = {.ok = false, .message = s.error().message};
        ++reload_failures_;
        reply.message = s.error().message;
        for (const auto& d : parts_->applier.problems())
            reply.problems.push_back({d.file, d.location.line, d.location.column, d.path, d.message,
                                      config::format_diagnostic(d)});
        daemon_log("reload rejected, running config kept:\n" + s.error().message);
    }
    publish();
    runtime_config cfg{};
    if (read_runtime_config(parts_->datapath->map_fd("runtime_cfg"), cfg)) reply.config_generation = cfg.config_generation;
    return reply;
}

control::Reply Daemon::hold_stage(bool hold) {
    control::Reply reply;
    InspectionHost& inspection = parts_->inspection;
    if (!inspection.has_rulesets()) {
        reply.message = "instance " + options_.instance + " has no inspect rulesets: there is no stage to " +
                        (hold ? "stop" : "start");
        return reply;
    }
    Status s = inspection.hold(hold);
    publish();
    if (!s) {
        daemon_log("inspection stage: " + s.error().message);
        reply.message = "inspection stage: " + s.error().message;
        return reply;
    }
    reply.ok = inspection.running() != hold;
    reply.message = reply.ok ? (hold ? "inspection stage stopped: punted flows get their ruleset's fail-mode"
                                     : "inspection stage running")
                             : (inspection.running() ? "the inspection stage is still running; see the daemon's log"
                                                     : "the inspection stage is not running; see the daemon's log");
    return reply;
}

Status Daemon::start_agent() {
    if (!ha_.enabled) {
        // Pins kept from a run with ha: may still ask for flow events; nobody reads them now.
        runtime_config cfg{};
        const int fd = parts_->datapath->map_fd("runtime_cfg");
        if (read_runtime_config(fd, cfg) && cfg.ha_sync) {
            cfg.ha_sync = 0;
            return write_runtime_config(fd, cfg);
        }
        return {};
    }
    // Which group each zone's traffic belongs to, from the interfaces the
    // datapath binds (a zone without a group's interface has none).
    std::map<uint16_t, uint8_t> zone_groups;
    for (const auto& itf : parts_->applier.applied().interfaces)
        if (itf.ha_group) zone_groups[itf.zone_id] = itf.ha_group;
    auto agent = ha::Agent::start(ha_, node_, *parts_->datapath, std::move(zone_groups),
                                  static_cast<uint16_t>(parts_->applier.applied().zones.size()));
    if (!agent) return agent.error();
    parts_->agent = std::move(agent.value());
    return {};
}

control::Reply Daemon::ha_status() {
    control::Reply reply;
    if (!parts_->agent) {
        reply.message = "instance " + options_.instance + " runs no HA pair (its config has no ha: section)";
        return reply;
    }
    reply.ok = true;
    reply.state = parts_->agent->status().dump();
    return reply;
}

control::Reply Daemon::ha_failover(const std::string& group) {
    control::Reply reply;
    if (!parts_->agent) {
        reply.message = "instance " + options_.instance + " runs no HA pair (its config has no ha: section)";
        return reply;
    }
    auto r = parts_->agent->failover(group);
    reply.ok = r.ok();
    reply.message = r ? r.value() : r.error().message;
    return reply;
}

control::Reply Daemon::answer(const control::Request& request) {
    switch (request.command) {
    case control::Command::reload: return reload();
    case control::Command::inspect_stop: return hold_stage(true);
    case control::Command::inspect_start: return hold_stage(false);
    case control::Command::ha_status: return ha_status();
    case control::Command::ha_failover: return ha_failover(request.argument);
    case control::Command::egress_add:
    case control::Command::egress_delete:
    case control::Command::egress_replace: return egress_change(request);
    case control::Command::metrics: {
        control::Reply reply;
        try {
            auto [text, json] = parts_->observe.metrics_both();
            reply.message = std::move(text);
            reply.state = json.dump();
            reply.ok = true;
        } catch (const std::exception& e) {
            reply.message = std::string("cannot collect metrics: ") + e.what();
        }
        return reply;
    }
    case control::Command::status: break;
    }
    control::Reply reply;
    reply.ok = true;
    reply.state = nlohmann::json(state_of(options_, paths_, *parts_, reloads_, last_reload_)).dump();
    return reply;
}

control::Reply Daemon::egress_change(const control::Request& request) {
    control::Reply reply;
    const nlohmann::json arg = nlohmann::json::parse(request.argument, nullptr, false);
    if (!arg.is_object() || !arg.contains("scope") || !arg["scope"].is_string() || !arg.contains("rule") ||
        !arg["rule"].is_string()) {
        reply.message = "egress: the request needs a scope and a rule";
        return reply;
    }
    size_t position = 0;
    for (const char* key : {"at", "index"})
        if (arg.contains(key)) {
            if (!arg[key].is_number_unsigned()) {
                reply.message = std::string("egress: \"") + key + "\" must be a positive rule number";
                return reply;
            }
            position = arg[key].get<size_t>();
        }
    const auto change = request.command == control::Command::egress_add      ? EgressHost::RuleChange::add
                        : request.command == control::Command::egress_delete ? EgressHost::RuleChange::remove
                                                                             : EgressHost::RuleChange::replace;
    auto done = parts_->egress.change_rule(change, arg["scope"].get<std::string>(), arg["rule"].get<std::string>(), position);
    reply.ok = done.ok();
    reply.message = done ? done.value() : done.error().message;
    daemon_log("egress: " + reply.message);
    publish();
    return reply;
}

void Daemon::shut_down() {
    if (parts_->agent) parts_->agent->stop();  // the peer takes the groups over at once
    parts_->inspection.stop();
    parts_->egress.stop();
    parts_->attachments.detach_all();
}

void Daemon::serve() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);   // systemd's reload
    sigaddset(&mask, SIGUSR1);  // inspect stop, for scripts without the socket
    sigaddset(&mask, SIGUSR2);  // inspect start
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    Datapath& dp = *parts_->datapath;
    auto watcher = NetlinkWatcher::open();
    if (!watcher)
        daemon_log("warning: " + watcher.error().message +
                   "; FIB caches and source NAT interface addresses refresh only on config changes");
    else
        parts_->nat.refresh();  // an address that changed before the watcher subscribed
    SessionGc gc(dp.map_fd("sessions_v4"), dp.map_fd("sessions_v6"), dp.map_fd("runtime_cfg"), dp.map_fd("stats"),
                 dp.map_fd(SLUICE_MAP_NAT_PORTS), dp.map_fd(SLUICE_MAP_SRC_RELEASED));
    ha::Agent* agent = parts_->agent.get();
    if (agent) gc.on_removed([agent](const SessionEntry& e) { agent->flow_expired(e); });
    FlowLogger& flow_log = parts_->observe.flow_log();
    gc.on_flow_removed([&flow_log](const SessionEntry& e, const SessionEntry* peer, uint64_t now) {
        flow_log.flow_closed(e, peer, now);
    });
    std::vector<pollfd> fds;
    uint64_t last_housekeeping_ns = 0;
    for (;;) {
        // The HA agent's next deadline to the nanosecond (ppoll): a
        // hold-time of a few ms must not be rounded up to the next ms.
        uint64_t wait_ns = agent ? std::min<uint64_t>(1'000'000'000, agent->tick()) : 1'000'000'000;
        if (const uint64_t drain_ns = flow_log.drain_interval_ns()) wait_ns = std::min(wait_ns, drain_ns);
        const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
        // Slots 0-3 (kSignalSlot ... kFlowEventsSlot), then the HA agent's.
        fds = {{sfd, POLLIN, 0},
               {watcher ? watcher.value()->fd() : -1, POLLIN, 0},
               {control_ ? control_->fd() : -1, POLLIN, 0},
               {flow_log.fd(), POLLIN, 0}};
        if (agent)
            for (int fd : agent->fds()) fds.push_back({fd, POLLIN, 0});
        int n = ppoll(fds.data(), fds.size(), &timeout, nullptr);
        if (n > 0 && agent) {
            bool readable = false;
            for (size_t i = kAgentSlots; i < fds.size(); ++i) readable |= (fds[i].revents & POLLIN) != 0;
            if (readable) agent->on_readable();
        }
        // Every time round, not only when the ring's fd woke us: below
        // FLOW_EVENTS_WAKEUP_BYTES the datapath does not wake anyone.
        flow_log.drain();
        if (n > 0 && (fds[kControlSlot].revents & POLLIN)) {
            if (auto s = control_->serve_one([this](const control::Request& r) { return answer(r); }); !s)
                daemon_log(s.error().message);
        }
        if (n > 0 && (fds[kSignalSlot].revents & POLLIN)) {
            signalfd_siginfo si{};
            while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGHUP) {
                    (void)reload();
                } else if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
                    (void)hold_stage(si.ssi_signo == SIGUSR1);
                } else {
                    daemon_log("stopping: detaching programs (pinned maps and sessions are kept)");
                    control_.reset();
                    shut_down();
                    std::filesystem::remove(paths_.state_file());
                    close(sfd);
                    return;
                }
            }
        }
        if (n > 0 && watcher && (fds[kNetlinkSlot].revents & POLLIN)) {
            if (watcher.value()->drain()) {
                if (auto s = dp.bump_fib_generation(); !s) daemon_log(s.error().message);
            }
            if (watcher.value()->addresses_changed()) parts_->nat.refresh();
        }
        // A standby leaves expiry to the active node, whose deletes it receives.
        if (agent) gc.set_idle_floor(agent->idle_floor_ns());
        if (!agent || !agent->gc_on_hold())
            if (auto r = gc.maybe_collect(coarse_now_ns()); !r) daemon_log("session GC: " + r.error().message);
        flow_log.flush();   // the closes the walk queued
        // The rest once a second, or at once after a signal, a netlink
        // event, a control request or an HA message: the loop also wakes
        // every FLOW_EVENTS_DRAIN_MS while flow logging is on, and at the HA
        // agent's deadlines, and none of these needs that pace.
        bool something_happened = false;
        for (size_t i = 0; n > 0 && i < fds.size(); ++i)
            if (i != kFlowEventsSlot && fds[i].revents) something_happened = true;
        const uint64_t now_ns = coarse_now_ns();
        if (!something_happened && now_ns - last_housekeeping_ns < kHousekeepingIntervalNs) continue;
        last_housekeeping_ns = now_ns;
        parts_->inspection.check_load();
        parts_->egress.tick();
        parts_->observe.check_capture();
        parts_->observe.refresh(agent ? agent->status() : nlohmann::json(), nullptr, reloads_ - reload_failures_,
                                reload_failures_);
    }
}

int Daemon::run() {
    // Validate before touching anything: a rejected config attaches nothing.
    auto parsed = config::load_config(options_.config_path);
    if (!parsed) {
        std::cerr << parsed.error().message << (parsed.error().message.ends_with('\n') ? "" : "\n");
        return 1;
    }
    if (auto node = ha::resolve_node(parsed.value().ha, options_.node); !node) {
        daemon_log("not started: " + node.error().message);
        return 1;
    } else {
        node_ = node.value();
        ha_ = parsed.value().ha;
    }
    if (auto s = prepare_bpffs(); !s) {
        daemon_log(s.error().message);
        return 1;
    }
    paths_ = instance_paths(options_.instance);
    if (auto state = read_state(paths_.state_file())) {
        const int pid = state->pid;
        if (pid != getpid() && process_alive(pid)) {
            daemon_log("instance " + options_.instance + " is already running (pid " + std::to_string(pid) + ")");
            return 1;
        }
    }
    bool fresh_pins = !std::filesystem::exists(paths_.pin_dir);
    const config::Limits& limits = parsed.value().limits;
    auto dp = Datapath::open(DatapathOptions{
        .pin_dir = paths_.pin_dir,
        .sessions = limits.sessions,
        .sessions_origin = limits.sessions_location
                               ? parsed.value().file + ":" + std::to_string(limits.sessions_location->line) + ":" +
                                     std::to_string(limits.sessions_location->column) + " limits.sessions"
                               : parsed.value().file + " without limits.sessions: the default"});
    if (!dp) {
        daemon_log("not started: " + dp.error().message);
        if (fresh_pins) (void)remove_pins(paths_.pin_dir);
        return 1;
    }
    parts_ = std::make_unique<Parts>(std::move(dp.value()), options_.config_path, paths_);
    if (auto s = parts_->applier.apply(true); !s) {
        daemon_log("not started: " + s.error().message);
        shut_down();
        if (fresh_pins) (void)remove_pins(paths_.pin_dir);
        return 1;
    }
    if (auto s = start_agent(); !s) {
        daemon_log("not started: " + s.error().message);
        shut_down();
        if (fresh_pins) (void)remove_pins(paths_.pin_dir);
        return 1;
    }
    if (auto s = parts_->datapath->pin_programs(); !s) daemon_log("warning: " + s.error().message);
    std::error_code ec;
    std::filesystem::create_directories(paths_.state_dir, ec);
    if (auto server = control::ControlServer::open(control::socket_path(paths_.state_dir)); server)
        control_ = std::move(server.value());
    else
        daemon_log("warning: " + server.error().message +
                   "; `sluice reload` and `inspect stop|start` cannot reach this daemon (SIGHUP still reloads)");
    publish();

    const CompiledConfig& applied = parts_->applier.applied();
    daemon_log("instance " + options_.instance + " running (pid " + std::to_string(getpid()) + "): " +
               std::to_string(applied.zones.size()) + (applied.zones.size() == 1 ? " zone, " : " zones, ") +
               std::to_string(applied.policies.size()) + (applied.policies.size() == 1 ? " policy" : " policies") +
               "; attached: " + parts_->attachments.summary() +
               (fresh_pins ? "" : "; sessions kept from the previous run"));
    serve();
    return 0;
}

}  // namespace

int run_daemon(const RunOptions& options) {
    // Signals arrive through a signalfd; block them before any thread exists.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGUSR2);
    // Before any thread starts (the inspection workers inherit the mask), so
    // only the signalfd in serve() ever sees these.
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    // A flow log on a pipe whose reader went away: an error to count, not the end.
    signal(SIGPIPE, SIG_IGN);
    Daemon d(options);
    return d.run();
}

}  // namespace sluice
