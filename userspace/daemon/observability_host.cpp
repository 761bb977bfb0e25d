#include "daemon/observability_host.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "daemon/daemon_log.h"
#include "daemon/state_file.h"
#include "loader/datapath.h"
#include "loader/map_io.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {
namespace {

std::pair<std::string, uint16_t> listen_of(const config::Endpoint& e) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(e.address.family == config::Family::ipv4 ? AF_INET : AF_INET6, e.address.addr.data(), buf, sizeof(buf));
    return {buf, e.port};
}

}  // namespace

ObservabilityHost::ObservabilityHost(const Datapath& datapath, const InstancePaths& paths)
    : dp_(datapath), collector_(datapath, paths), flow_log_(datapath.map_fd(SLUICE_MAP_FLOW_EVENTS)) {}

Status ObservabilityHost::prepare(const config::Config& parsed) {
    abandon();
    if (auto s = flow_log_.prepare(parsed); !s) return s;
    server_prepared_ = true;
    if (!parsed.metrics.listen) {
        prepared_listen_.reset();
        return {};
    }
    prepared_listen_ = listen_of(*parsed.metrics.listen);
    if (server_ && server_->address() == prepared_listen_->first && server_->port() == prepared_listen_->second)
        return {};   // the running listener stays
    auto started = observe::MetricsServer::start(prepared_listen_->first, prepared_listen_->second,
                                                 [this] { return collector_.render(); });
    if (!started) {
        server_prepared_ = false;
        Error e = started.error();
        e.message = parsed.file + ": metrics.listen: " + e.message;
        if (parsed.metrics.listen) e.where = ErrorLocation{parsed.file, parsed.metrics.listen->location.line,
                                                           parsed.metrics.listen->location.column, "metrics.listen"};
        return e;
    }
    prepared_server_ = std::move(started.value());
    return {};
}

void ObservabilityHost::abandon() {
    prepared_server_.reset();
    server_prepared_ = false;
}

void ObservabilityHost::adopt(const config::Config& parsed, const CompiledConfig& compiled) {
    if (server_prepared_) {
        if (!prepared_listen_) {
            if (server_) daemon_log("metrics: no longer serving /metrics");
            server_.reset();
        } else if (prepared_server_) {
            server_ = std::move(prepared_server_);
            daemon_log("metrics: serving /metrics on " + parsed.metrics.listen->text);
        }
    }
    server_prepared_ = false;
    runtime_config cfg{};
    (void)read_runtime_config(dp_.map_fd(SLUICE_MAP_RUNTIME_CONFIG), cfg);
    flow_log_.adopt(parsed, compiled, cfg.config_generation);
    MetricsSnapshot names;
    names.zones = compiled.zones;
    names.policies = compiled.policies;
    names.filters = compiled.filters;
    names.host_services = compiled.host_inbound.services;
    names.host_zones = compiled.host_inbound.zones;
    for (const auto& r : parsed.rulesets) names.rulesets[parsed.ruleset_id(r.name)] = r.name;
    names.generation = compiled.tables.generation;
    names.default_action = compiled.default_action;
    names.ha = std::move(names_.ha);
    names.egress = std::move(names_.egress);
    names.reloads = names_.reloads;
    names.reload_failures = names_.reload_failures;
    names_ = std::move(names);
    publish();
}

void ObservabilityHost::refresh(nlohmann::json ha, nlohmann::json egress, uint64_t reloads, uint64_t failures) {
    names_.ha = std::move(ha);
    names_.egress = std::move(egress);
    names_.reloads = reloads;
    names_.reload_failures = failures;
    publish();
}

void ObservabilityHost::publish() {
    auto s = std::make_shared<MetricsSnapshot>(names_);
    s->flow_log = flow_log_.counters();
    collector_.publish(std::move(s));
}

std::pair<std::string, nlohmann::json> ObservabilityHost::metrics_both() const {
    const auto families = collector_.collect();
    return {observe::render_prometheus(families), observe::families_json(families)};
}

void ObservabilityHost::check_capture() {
    const int fd = dp_.map_fd(SLUICE_MAP_CAPTURE_CFG);
    const uint32_t key = 0;
    capture_config c{};
    if (fd < 0 || bpf_map_lookup_elem(fd, &key, &c) != 0 || !c.enabled) return;
    if (c.owner_pid && process_alive(static_cast<int>(c.owner_pid))) return;
    capture_config off{};
    if (bpf_map_update_elem(fd, &key, &off, BPF_ANY) == 0)
        daemon_log("capture: pid " + std::to_string(c.owner_pid) + " is gone; drop capture turned off");
}

std::string ObservabilityHost::metrics_listen() const {
    if (!server_) return "";
    const auto& a = server_->address();
    return (a.find(':') != std::string::npos ? "[" + a + "]" : a) + ":" + std::to_string(server_->port());
}

}  // namespace sluice
