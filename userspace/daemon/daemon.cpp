#include "daemon/daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "config/load_config.h"
#include "daemon/accept_local.h"
#include "daemon/control_server.h"
#include "daemon/host_inbound_state.h"
#include "daemon/nat_state.h"
#include "daemon/screen_state.h"
#include "daemon/netlink_watcher.h"
#include "daemon/session_gc.h"
#include "daemon/session_size_change.h"
#include "daemon/state_file.h"
#include "inspect/stage.h"
#include "loader/punt_tables.h"
#include "loader/attach.h"
#include "loader/datapath.h"
#include "loader/instance_paths.h"
#include "loader/map_io.h"
#include "loader/nat_ifaddrs.h"
#include "loader/session_table.h"
#include "pipeline/prepare.h"

namespace sluice {
namespace {

void log(const std::string& message) { std::cerr << "sluice: " << message << std::endl; }

const char* mode_name(XdpMode m) { return m == XdpMode::Native ? "native" : "generic"; }

struct Attached {
    ResolvedInterface itf;
    XdpMode mode = XdpMode::Generic;
    std::string warning;
};

using LoadedConfig = pipeline::PreparedConfig;

// The device whose address source NAT to this interface uses: the one the
// FIB names as egress (the VLAN device for a sub-interface).
uint32_t egress_ifindex(const ResolvedInterface& itf) {
    return itf.vlan_id != 0 && itf.vlan_ifindex != 0 ? itf.vlan_ifindex : itf.ifindex;
}

std::string ifaddr_text(const nat_ifaddr& a) {
    uint32_t v4[4] = {a.v4, 0, 0, 0};
    std::string text = a.has_v4 ? address_text(SLUICE_FAMILY_IPV4, v4) : "no IPv4";
    return text + " " + (a.has_v6 ? address_text(SLUICE_FAMILY_IPV6, a.v6) : "no IPv6");
}

class Daemon {
public:
    explicit Daemon(RunOptions options) : options_(std::move(options)) {}
    int run();

private:
    // Loads and compiles the config file for the datapath's inactive generation.
    Result<LoadedConfig> load_compiled();
    // Ids for the config's rulesets: a name keeps the id it had (sessions of
    // open flows carry it, and fail-mode and counters follow it); a new name
    // gets an id not used since start while there is one.
    Result<std::map<std::string, uint16_t>> stable_ruleset_ids(const config::Config& c) const;
    Status apply_config(bool initial);
    // Rewrites nat_ifaddrs from the interfaces' current addresses.
    void refresh_nat_ifaddrs();
    // accept_local on every interface when the config translates (accept_local.h).
    void apply_accept_local();
    Status attach_interface(const ResolvedInterface& itf);
    void detach_interface(const std::string& device, uint32_t ifindex);
    void detach_all();
    // Runs the inspection stage while the config has rulesets; hands it new ones.
    Status sync_stage(const std::shared_ptr<const inspect::CompiledRulesets>& rulesets);
    // What state.json holds and `status` on the control socket answers.
    nlohmann::json state_json() const;
    void write_state_file();
    nlohmann::json inspect_state_json() const;
    // Applies the config file again; the reply says how it ended.
    control::Reply reload();
    // `sluice inspect stop|start`.
    control::Reply hold_stage(bool hold);
    control::Reply answer(const control::Request& request);
    void serve();

    RunOptions options_;
    InstancePaths paths_;
    std::unique_ptr<Datapath> dp_;
    CompiledConfig current_;
    config::Nat nat_;                           // the running config's NAT section
    std::vector<ResolvedInterface> resolved_;   // the running config's interfaces
    std::string ifaddrs_logged_;                // last nat_ifaddrs summary logged
    std::map<std::string, Attached> attached_;  // by interface name (attach device)
    std::unique_ptr<inspect::Stage> stage_;     // while the config has inspect rulesets
    std::shared_ptr<const inspect::CompiledRulesets> rulesets_;  // the running config's
    std::vector<config::Ruleset> ruleset_configs_;
    std::map<std::string, uint16_t> ruleset_ids_;  // the running config's
    uint16_t next_ruleset_id_ = 1;
    bool stage_held_ = false;
    uint64_t stage_changes_ = 0;                // answered `sluice inspect stop|start` requests                   // `sluice inspect stop`: kept down until `start`
    config::Timeouts timeouts_;
    std::unique_ptr<control::ControlServer> control_;
    std::vector<config::Diagnostic> problems_;  // of the last config the pipeline refused
    std::vector<std::string> warnings_;         // of the last apply: applied, but not all of it took
    nlohmann::json last_reload_ = {{"ok", true}, {"message", ""}};
    uint64_t reloads_ = 0;
};

Result<LoadedConfig> Daemon::load_compiled() {
    pipeline::PrepareOptions options;
    options.generation = dp_->inactive_generation();
    options.ruleset_ids = [this](const config::Config& c) { return stable_ruleset_ids(c); };
    pipeline::Prepared prepared = pipeline::prepare(options_.config_path, options);
    if (!prepared.ok()) {
        problems_ = prepared.problems;
        return prepared.error();
    }
    return std::move(*prepared.config);
}

Result<std::map<std::string, uint16_t>> Daemon::stable_ruleset_ids(const config::Config& c) const {
    std::map<std::string, uint16_t> ids;
    std::set<uint16_t> taken;
    for (const auto& r : c.rulesets)
        if (auto it = ruleset_ids_.find(r.name); it != ruleset_ids_.end()) taken.insert(ids[r.name] = it->second);
    uint16_t fresh = next_ruleset_id_, reuse = 1;
    for (const auto& r : c.rulesets) {
        if (ids.count(r.name)) continue;
        uint16_t id = 0;
        if (fresh < SLUICE_MAX_RULESETS) {
            id = fresh++;
        } else {
            while (reuse < SLUICE_MAX_RULESETS && taken.count(reuse)) ++reuse;
            if (reuse >= SLUICE_MAX_RULESETS)
                return make_error("more than " + std::to_string(SLUICE_MAX_RULESETS - 1) + " inspect rulesets");
            id = reuse;
        }
        taken.insert(ids[r.name] = id);
    }
    return ids;
}

Status Daemon::attach_interface(const ResolvedInterface& itf) {
    // A VLAN sub-interface shares its parent's XDP program.
    std::string device = itf.name.substr(0, itf.name.find('.'));
    if (itf.vlan_id != 0 || attached_.count(device)) {
        if (!attached_.count(device)) {
            ResolvedInterface parent = itf;
            parent.name = device;
            parent.vlan_id = 0;
            if (auto s = attach_interface(parent); !s) return s;
        }
        return {};
    }
    XdpMode mode = choose_xdp_mode(itf.xdp_mode, interface_driver(device));
    auto r = attach_xdp(device, itf.ifindex, dp_->prog_fd("xdp_main_prog"), mode);
    if (!r) return r.error();
    if (!r->warning.empty()) log("warning: " + r->warning);
    Status tc = attach_tc(device, itf.ifindex, dp_->prog_fd(SLUICE_PROG_TC_EGRESS), TcHook::Egress);
    if (tc) tc = attach_tc(device, itf.ifindex, dp_->prog_fd(SLUICE_PROG_TC_PUNT), TcHook::Ingress);
    if (!tc) {
        detach_interface(device, itf.ifindex);
        return tc;
    }
    attached_[device] = Attached{.itf = itf, .mode = r->mode, .warning = r->warning};
    attached_[device].itf.name = device;
    return {};
}

void Daemon::detach_interface(const std::string& device, uint32_t ifindex) {
    if (auto s = detach_xdp(device, ifindex); !s) log(s.error().message);
    for (TcHook hook : {TcHook::Egress, TcHook::Ingress})
        if (auto s = detach_tc(device, ifindex, hook); !s) log(s.error().message);
}

void Daemon::detach_all() {
    for (auto& [name, a] : attached_) detach_interface(name, a.itf.ifindex);
    attached_.clear();
}

Status Daemon::sync_stage(const std::shared_ptr<const inspect::CompiledRulesets>& rulesets) {
    if (rulesets->rulesets.empty() || stage_held_) {
        if (stage_)
            log(stage_held_ ? "inspection stage stopped by the operator: punted flows get their ruleset's fail-mode"
                            : "inspection stage stopped: the config has no inspect rulesets");
        stage_.reset();
        return {};
    }
    if (stage_) {
        stage_->update_rulesets(rulesets);
        return {};
    }
    inspect::StageOptions options;
    options.sessions_v4_fd = dp_->map_fd(SLUICE_MAP_SESSIONS_V4);
    options.sessions_v6_fd = dp_->map_fd(SLUICE_MAP_SESSIONS_V6);
    options.punt_cfg_fd = dp_->map_fd(SLUICE_MAP_PUNT_CFG);
    options.counters_path = paths_.inspect_counters_file();
    std::error_code ec;
    std::filesystem::create_directories(paths_.state_dir, ec);  // state.json is written later
    options.udp_idle_ns = static_cast<uint64_t>(std::chrono::nanoseconds(timeouts_.udp).count());
    auto stage = inspect::Stage::start(options, rulesets);
    if (!stage) return stage.error();
    stage_ = std::move(stage.value());
    log("inspection stage running: " + std::to_string(stage_->worker_count()) + " workers, " +
        std::to_string(rulesets->rulesets.size()) + " rulesets, " + std::to_string(rulesets->pattern_count()) +
        " patterns");
    return {};
}

Status Daemon::apply_config(bool initial) {
    auto loaded = load_compiled();
    if (!loaded) return loaded.error();
    if (auto s = check_session_size_unchanged(loaded->parsed, dp_->session_capacity()); !s) return s;
    const CompiledConfig& compiled = loaded->compiled;
    auto resolved = Datapath::resolve(compiled);
    if (!resolved) return resolved.error();
    if (auto s = dp_->apply(compiled, resolved.value()); !s) return s;
    // Interfaces the new config adds get attached; ones it dropped, detached.
    std::map<std::string, bool> wanted;
    for (const auto& itf : resolved.value()) {
        wanted[itf.name.substr(0, itf.name.find('.'))] = true;
        if (auto s = attach_interface(itf); !s) {
            if (initial) return s;
            warnings_.push_back(s.error().message);
            log("reload: " + s.error().message);
        }
    }
    for (auto it = attached_.begin(); it != attached_.end();) {
        if (!wanted.count(it->first)) {
            detach_interface(it->first, it->second.itf.ifindex);
            it = attached_.erase(it);
        } else {
            ++it;
        }
    }
    if (auto s = write_punt_rulesets(dp_->map_fd(SLUICE_MAP_PUNT_RULESETS), loaded->parsed); !s) return s;
    ruleset_ids_ = loaded->parsed.ruleset_ids;
    for (const auto& [name, id] : ruleset_ids_) next_ruleset_id_ = std::max<uint16_t>(next_ruleset_id_, id + 1);
    timeouts_ = loaded->parsed.timeouts;
    rulesets_ = loaded->rulesets;
    ruleset_configs_ = loaded->parsed.rulesets;
    if (auto s = sync_stage(rulesets_); !s) {
        if (initial) return s;
        warnings_.push_back("inspection stage: " + s.error().message);
        log("reload: inspection stage: " + s.error().message);
    }
    current_ = std::move(loaded->compiled);
    nat_ = std::move(loaded->parsed.nat);
    resolved_ = std::move(resolved.value());
    refresh_nat_ifaddrs();
    apply_accept_local();
    return {};
}

void Daemon::refresh_nat_ifaddrs() {
    std::vector<uint32_t> ifindexes;
    for (const auto& itf : resolved_) ifindexes.push_back(egress_ifindex(itf));
    auto written = sync_nat_ifaddrs(dp_->map_fd(SLUICE_MAP_NAT_IFADDRS), ifindexes);
    if (!written) {
        log("warning: source NAT to interface addresses: " + written.error().message);
        return;
    }
    if (!config_has_nat(nat_)) return;
    std::string summary;
    for (const auto& itf : resolved_) {
        for (const auto& [ifindex, addr] : written.value()) {
            if (ifindex == egress_ifindex(itf))
                summary += (summary.empty() ? "" : "; ") + itf.name + " " + ifaddr_text(addr);
        }
    }
    if (summary != ifaddrs_logged_) log("source NAT interface addresses: " + summary);
    ifaddrs_logged_ = summary;
}

void Daemon::apply_accept_local() {
    if (!config_has_nat(nat_)) return;  // left as the operator set it
    std::vector<std::string> names;
    for (const auto& itf : resolved_) names.push_back(itf.name);
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
    log("NAT configured: setting net.ipv4.conf.<if>.accept_local=1 on " + joined +
        " (after source NAT, packets the kernel forwards for the fast path may carry this firewall's own "
        "address as source; without accept_local IPv4 drops them as martians)");
    for (const auto& failure : enable_accept_local_all(names)) log("warning: " + failure);
}

void Daemon::write_state_file() {
    if (auto s = write_state(paths_.state_file(), state_json()); !s) log(s.error().message);
}

nlohmann::json Daemon::state_json() const {
    nlohmann::json state;
    state["instance"] = options_.instance;
    state["pid"] = getpid();
    state["config"] = std::filesystem::absolute(options_.config_path).string();
    state["pin_dir"] = paths_.pin_dir;
    runtime_config cfg{};
    if (read_runtime_config(dp_->map_fd("runtime_cfg"), cfg)) state["config_generation"] = cfg.config_generation;
    state["reloads"] = reloads_;
    state["last_reload"] = last_reload_;
    auto& itfs = state["interfaces"] = nlohmann::json::array();
    for (const auto& itf : current_.interfaces) {
        std::string device = itf.parent.empty() ? itf.name : itf.parent;
        nlohmann::json j = {{"name", itf.name}, {"zone_id", itf.zone_id}, {"vlan_id", itf.vlan_id},
                            {"xdp_mode_requested", itf.xdp_mode}};
        if (auto a = attached_.find(device); a != attached_.end()) {
            j["device"] = device;
            j["ifindex"] = a->second.itf.ifindex;
            j["xdp_mode"] = mode_name(a->second.mode);
            if (!a->second.warning.empty()) j["warning"] = a->second.warning;
        }
        itfs.push_back(j);
    }
    auto& zones = state["zones"] = nlohmann::json::array();
    for (const auto& z : current_.zones) zones.push_back({{"name", z.name}, {"id", z.id}});
    auto& policies = state["policies"] = nlohmann::json::array();
    for (const auto& p : current_.policies) {
        static const char* actions[] = {"deny", "permit", "reject", "inspect"};
        nlohmann::json j = {{"name", p.name}, {"id", p.id}, {"from", p.from_zone}, {"to", p.to_zone},
                            {"action", actions[p.action & 3]}};
        if (!p.ruleset.empty()) j["ruleset"] = p.ruleset;
        j["source"] = p.sources.empty() ? nlohmann::json("any") : nlohmann::json(p.sources);
        j["destination"] = p.destinations.empty() ? nlohmann::json("any") : nlohmann::json(p.destinations);
        j["application"] = p.applications.empty() ? nlohmann::json("any") : nlohmann::json(p.applications);
        policies.push_back(j);
    }
    auto& filters = state["filters"] = nlohmann::json::array();
    for (const auto& f : current_.filters) {
        nlohmann::json rules = nlohmann::json::array();
        for (const auto& r : f.rules) rules.push_back({{"name", r.name}, {"action", r.action}, {"slot", r.slot}});
        filters.push_back({{"name", f.name}, {"id", f.id}, {"interfaces", f.interfaces}, {"rules", rules}});
    }
    const auto& t = current_.tables;
    state["classifier"] = {{"rules", t.rule_count},
                           {"groups", t.groups.size()},
                           {"cross_entries", t.cross.size()},
                           {"sparse_entries", t.sparse.size()},
                           {"results", t.results.size() - 1},
                           {"map_bytes", t.map_bytes}};
    state["nat"] = nat_state_json(nat_);
    state["host_inbound"] = host_inbound_state_json(current_.host_inbound);
    state["screens"] = screen_state_json(current_.zones, current_.screens);
    state["inspect"] = inspect_state_json();
    state["default_action"] = current_.default_action == POLICY_ACTION_PERMIT ? "permit"
                              : current_.default_action == POLICY_ACTION_REJECT ? "reject"
                                                                                : "deny";
    return state;
}

nlohmann::json Daemon::inspect_state_json() const {
    nlohmann::json j;
    j["running"] = stage_ != nullptr;
    j["held_by_operator"] = stage_held_;
    j["changes"] = stage_changes_;
    j["counters"] = paths_.inspect_counters_file();
    if (stage_) {
        j["workers"] = stage_->worker_count();
        j["tcp_port"] = stage_->ports().tcp;
        j["udp_port"] = stage_->ports().udp;
    }
    auto& list = j["rulesets"] = nlohmann::json::array();
    for (size_t i = 0; i < ruleset_configs_.size(); ++i) {
        const auto& r = ruleset_configs_[i];
        auto id = ruleset_ids_.find(r.name);
        nlohmann::json rj = {{"name", r.name},
                             {"id", id == ruleset_ids_.end() ? 0 : id->second},
                             {"fail_mode", r.fail_closed ? "closed" : "open"}};
        rj["inspect_bytes"] = r.inspect_bytes ? nlohmann::json(*r.inspect_bytes) : nlohmann::json("unlimited");
        auto& patterns = rj["patterns"] = nlohmann::json::array();
        for (const auto& p : r.patterns) {
            static const char* directions[] = {"client-to-server", "server-to-client", "both"};
            static const char* actions[] = {"reject", "drop", "alert"};
            patterns.push_back({{"name", p.name},
                                {"regex", p.regex},
                                {"direction", directions[static_cast<int>(p.direction)]},
                                {"action", actions[static_cast<int>(p.action)]},
                                {"caseless", p.caseless}});
        }
        list.push_back(rj);
    }
    return j;
}

control::Reply Daemon::reload() {
    ++reloads_;
    problems_.clear();
    warnings_.clear();
    Status s = apply_config(false);
    control::Reply reply;
    reply.ok = s.ok();
    if (s) {
        last_reload_ = {{"ok", true}, {"message", ""}};
        reply.message = "reloaded " + options_.config_path;
        for (const auto& w : warnings_) reply.message += "; warning: " + w;
        log(reply.message);
    } else {
        // The running config stays in force: apply() flips nothing on error.
        last_reload_ = {{"ok", false}, {"message", s.error().message}};
        reply.message = s.error().message;
        for (const auto& d : problems_)
            reply.problems.push_back({d.file, d.location.line, d.location.column, d.path, d.message,
                                      config::format_diagnostic(d)});
        log("reload rejected, running config kept:\n" + s.error().message);
    }
    write_state_file();
    runtime_config cfg{};
    if (read_runtime_config(dp_->map_fd("runtime_cfg"), cfg)) reply.config_generation = cfg.config_generation;
    return reply;
}

control::Reply Daemon::hold_stage(bool hold) {
    control::Reply reply;
    if (ruleset_configs_.empty()) {
        reply.message = "instance " + options_.instance + " has no inspect rulesets: there is no stage to " +
                        (hold ? "stop" : "start");
        return reply;
    }
    stage_held_ = hold;
    Status st = sync_stage(rulesets_);
    ++stage_changes_;
    write_state_file();
    if (!st) {
        log("inspection stage: " + st.error().message);
        reply.message = "inspection stage: " + st.error().message;
        return reply;
    }
    reply.ok = (stage_ != nullptr) != hold;
    reply.message = reply.ok ? (hold ? "inspection stage stopped: punted flows get their ruleset's fail-mode"
                                     : "inspection stage running")
                             : (stage_ ? "the inspection stage is still running; see the daemon's log"
                                       : "the inspection stage is not running; see the daemon's log");
    return reply;
}

control::Reply Daemon::answer(const control::Request& request) {
    switch (request.command) {
    case control::Command::reload: return reload();
    case control::Command::inspect_stop: return hold_stage(true);
    case control::Command::inspect_start: return hold_stage(false);
    case control::Command::status: break;
    }
    control::Reply reply;
    reply.ok = true;
    reply.state = state_json().dump();
    return reply;
}

void Daemon::serve() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGUSR1);  // sluice inspect stop
    sigaddset(&mask, SIGUSR2);  // sluice inspect start
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    auto watcher = NetlinkWatcher::open();
    if (!watcher)
        log("warning: " + watcher.error().message +
            "; FIB caches and source NAT interface addresses refresh only on config changes");
    else
        refresh_nat_ifaddrs();  // an address that changed before the watcher subscribed
    SessionGc gc(dp_->map_fd("sessions_v4"), dp_->map_fd("sessions_v6"), dp_->map_fd("runtime_cfg"),
                 dp_->map_fd("stats"), dp_->map_fd(SLUICE_MAP_NAT_PORTS), dp_->map_fd(SLUICE_MAP_SRC_RELEASED));
    for (;;) {
        pollfd fds[3] = {{sfd, POLLIN, 0},
                         {watcher ? watcher.value()->fd() : -1, POLLIN, 0},
                         {control_ ? control_->fd() : -1, POLLIN, 0}};
        int n = poll(fds, 3, 1000);
        if (n > 0 && (fds[2].revents & POLLIN)) {
            if (auto s = control_->serve_one([this](const control::Request& r) { return answer(r); }); !s)
                log(s.error().message);
        }
        if (n > 0 && (fds[0].revents & POLLIN)) {
            signalfd_siginfo si{};
            while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGHUP) {
                    (void)reload();
                } else if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
                    (void)hold_stage(si.ssi_signo == SIGUSR1);
                } else {
                    log("stopping: detaching programs (pinned maps and sessions are kept)");
                    control_.reset();
                    stage_.reset();
                    detach_all();
                    std::filesystem::remove(paths_.state_file());
                    close(sfd);
                    return;
                }
            }
        }
        if (n > 0 && watcher && (fds[1].revents & POLLIN)) {
            if (watcher.value()->drain()) {
                if (auto s = dp_->bump_fib_generation(); !s) log(s.error().message);
            }
            if (watcher.value()->addresses_changed()) refresh_nat_ifaddrs();
        }
        if (auto r = gc.maybe_collect(coarse_now_ns()); !r) log("session GC: " + r.error().message);
        if (stage_) stage_->check_load();
    }
}

int Daemon::run() {
    // Validate before touching anything: a rejected config attaches nothing.
    auto parsed = config::load_config(options_.config_path);
    if (!parsed) {
        std::cerr << parsed.error().message << (parsed.error().message.ends_with('\n') ? "" : "\n");
        return 1;
    }
    if (auto s = prepare_bpffs(); !s) {
        log(s.error().message);
        return 1;
    }
    paths_ = instance_paths(options_.instance);
    if (auto state = read_state(paths_.state_file())) {
        int pid = state->value("pid", 0);
        if (pid != getpid() && process_alive(pid)) {
            log("instance " + options_.instance + " is already running (pid " + std::to_string(pid) + ")");
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
        log("not started: " + dp.error().message);
        if (fresh_pins) (void)remove_pins(paths_.pin_dir);
        return 1;
    }
    dp_ = std::move(dp.value());
    if (auto s = apply_config(true); !s) {
        log("not started: " + s.error().message);
        stage_.reset();
        detach_all();
        if (fresh_pins) (void)remove_pins(paths_.pin_dir);
        return 1;
    }
    if (auto s = dp_->pin_programs(); !s) log("warning: " + s.error().message);
    std::error_code ec;
    std::filesystem::create_directories(paths_.state_dir, ec);
    if (auto server = control::ControlServer::open(control::socket_path(paths_.state_dir)); server)
        control_ = std::move(server.value());
    else
        log("warning: " + server.error().message + "; `sluice reload` and `inspect stop|start` cannot reach this "
            "daemon (SIGHUP still reloads)");
    write_state_file();

    std::string summary;
    for (const auto& [name, a] : attached_) summary += (summary.empty() ? "" : ", ") + name + " " + mode_name(a.mode);
    log("instance " + options_.instance + " running (pid " + std::to_string(getpid()) + "): " +
        std::to_string(current_.zones.size()) + " zones, " + std::to_string(current_.policies.size()) +
        " policies; attached: " + summary + (fresh_pins ? "" : "; sessions kept from the previous run"));
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
    Daemon d(options);
    return d.run();
}

}  // namespace sluice
