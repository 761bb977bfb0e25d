#include "cli/control.h"

#include <net/if.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/control_client.h"
#include "daemon/state_file.h"
#include "loader/attach.h"
#include "loader/datapath.h"
#include "loader/instance_paths.h"
#include "loader/punt_routing.h"

namespace sluice::cli {
namespace {

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
}

std::optional<control::Reply> ask_daemon(const std::string& instance, control::Command command,
                                         std::chrono::seconds timeout, std::ostream& err,
                                         const std::string& argument = "") {
    return ask_daemon_request(instance, control::Request{.command = command, .argument = argument}, timeout, err);
}

}  // namespace

std::optional<control::Reply> ask_daemon_request(const std::string& instance, const control::Request& request,
                                                 std::chrono::seconds timeout, std::ostream& err) {
    if (auto s = prepare_bpffs(); !s) {
        err << "sluice: " << s.error().message << "\n";
        return std::nullopt;
    }
    const InstancePaths paths = instance_paths(instance);
    auto reply = call_daemon(control::socket_path(paths.state_dir), request, timeout);
    if (!reply) {
        if (reply.error().code == ErrorCode::NotFound) err << "sluice: instance " << instance << " is not running\n";
        else err << "sluice: " << reply.error().message << "\n";
        return std::nullopt;
    }
    return reply.value();
}

int reload(const std::string& instance, std::ostream& out, std::ostream& err) {
    // The daemon reads, checks and applies the file, and answers when the new
    // generation is active or the file is refused; a large policy compiles
    // in seconds, hence the generous wait.
    auto reply = ask_daemon(instance, control::Command::reload, std::chrono::seconds(300), err);
    if (!reply) return 1;
    if (!reply->ok) {
        if (reply->problems.empty()) err << reply->message << "\n";
        for (const auto& p : reply->problems) err << p.text << "\n";
        err << "sluice: reload rejected; the running config stays in force\n";
        return 1;
    }
    out << "sluice: " << reply->message << " (config generation " << reply->config_generation << ")\n";
    return 0;
}

int inspect_stage(const std::string& instance, bool start, std::ostream& out, std::ostream& err) {
    auto reply = ask_daemon(instance, start ? control::Command::inspect_start : control::Command::inspect_stop,
                            std::chrono::seconds(60), err);
    if (!reply) return 1;
    if (!reply->ok) {
        err << "sluice: " << reply->message << "\n";
        return 1;
    }
    out << "sluice: " << reply->message << "\n";
    return 0;
}

int down(const std::string& instance, std::ostream& out, std::ostream& err) {
    if (auto s = prepare_bpffs(); !s) {
        err << "sluice: " << s.error().message << "\n";
        return 1;
    }
    InstancePaths paths = instance_paths(instance);
    auto state = read_state(paths.state_file());
    if (!state && state.error().code != ErrorCode::NotFound) {
        // Not this sluice's state file: what it says cannot be trusted, the pins can.
        err << "sluice: " << state.error().message << "; removing the pins without it\n";
    }
    int status = 0;
    if (state) {
        const int pid = state->pid;
        if (pid != getpid() && process_alive(pid)) {
            kill(pid, SIGTERM);
            if (!wait_until([&] { return !process_alive(pid); }, std::chrono::seconds(10))) {
                err << "sluice: daemon (pid " << pid << ") did not stop after SIGTERM\n";
                return 1;
            }
        }
        // A daemon that died without detaching (SIGKILL) leaves programs attached.
        for (const auto& itf : state->interfaces) {
            if (itf.device.empty()) continue;
            const std::string& device = itf.device;
            unsigned ifindex = if_nametoindex(device.c_str());
            if (ifindex == 0) continue;
            if (auto s = detach_xdp(device, ifindex); !s) {
                err << "sluice: " << s.error().message << "\n";
                status = 1;
            }
            for (TcHook hook : {TcHook::IngressPipeline, TcHook::Egress, TcHook::Ingress}) {
                if (auto s = detach_tc(device, ifindex, hook); !s) {
                    err << "sluice: " << s.error().message << "\n";
                    status = 1;
                }
            }
        }
    }
    if (auto s = remove_pins(paths.pin_dir); !s) {
        err << "sluice: " << s.error().message << "\n";
        status = 1;
    }
    // A stage that died without cleaning up leaves its policy route behind.
    if (auto s = remove_punt_routing(PuntRouting{}); !s) {
        err << "sluice: " << s.error().message << "\n";
        status = 1;
    }
    if (auto s = remove_instance_dir(paths.state_dir); !s) {
        err << "sluice: " << s.error().message << "\n";
        status = 1;
    }
    if (status == 0) out << "sluice: instance " << instance << " is down (programs detached, pins removed)\n";
    return status;
}

namespace {

std::string ms_text(const nlohmann::json& v) {
    if (v.is_null()) return "never";
    const double ms = v.get<double>();
    char buf[32];
    if (ms < 10000) std::snprintf(buf, sizeof(buf), "%.0f ms ago", ms);
    else std::snprintf(buf, sizeof(buf), "%.1f s ago", ms / 1000);
    return buf;
}

void print_ha_status(const nlohmann::json& s, std::ostream& out) {
    const auto& peer = s.at("peer");
    out << "node " << s.at("node").get<std::string>() << " (id " << s.at("node_id").get<int>() << "), peer "
        << peer.at("name").get<std::string>() << " at " << peer.at("address").get<std::string>() << " over "
        << s.at("fabric").get<std::string>() << ": " << (peer.at("alive").get<bool>() ? "alive" : "SILENT")
        << " (fabric " << ms_text(peer.at("last_heartbeat_fabric_ms")) << ", data links "
        << ms_text(peer.at("last_heartbeat_link_ms")) << ")"
        << (peer.at("synced").get<bool>() ? ", its sessions received" : ", bulk sync pending") << "\n";
    for (const auto& g : s.at("groups")) {
        out << "group " << g.at("name").get<std::string>() << ": " << g.at("role").get<std::string>() << " (priority "
            << g.at("priority").get<int>() << ", effective " << g.at("effective_priority").get<int>()
            << (g.at("preempt").get<bool>() ? ", preempt" : "") << (g.at("releasing").get<bool>() ? ", handed over" : "")
            << "), " << g.at("transitions").get<uint64_t>() << " transitions; " << g.at("why").get<std::string>()
            << "\n  peer: " << (g.at("peer").at("active").get<bool>() ? "active" : "not active") << ", priority "
            << g.at("peer").at("priority").get<int>() << "\n";
    }
    const auto& y = s.at("sync");
    out << "sync: " << (y.at("enabled").get<bool>() ? "on" : "off") << ", backlog " << y.at("backlog") << "; sent "
        << y.at("flows_sent") << " flows, " << y.at("deletes_sent") << " deletes in " << y.at("messages_sent")
        << " messages (" << y.at("send_failed") << " failed, " << y.at("not_sent_no_peer")
        << " changes while the fabric was silent, " << y.at("unmovable") << " unmovable)\n"
        << "      received " << y.at("flows_received") << " flows (" << y.at("flows_written") << " written, "
        << y.at("flows_refused") << " refused, " << y.at("apply_failed") << " failed), " << y.at("deletes_received")
        << " deletes; bulk syncs: " << y.at("bulk_requests_sent") << " asked, " << y.at("bulk_ends_received")
        << " received, " << y.at("bulk_requests_answered") << " answered\n";
    out << "refused datagrams:";
    for (const auto& [reason, n] : s.at("rejected").items()) out << " " << reason << " " << n;
    out << "\n";
}

}  // namespace

int ha_status(const std::string& instance, bool json, std::ostream& out, std::ostream& err) {
    auto reply = ask_daemon(instance, control::Command::ha_status, std::chrono::seconds(10), err);
    if (!reply) return 1;
    if (!reply->ok) {
        err << "sluice: " << reply->message << "\n";
        return 1;
    }
    auto s = nlohmann::json::parse(reply->state, nullptr, false);
    if (s.is_discarded()) {
        err << "sluice: the daemon's HA status is not JSON\n";
        return 1;
    }
    if (json) out << s.dump(2) << "\n";
    else print_ha_status(s, out);
    return 0;
}

int ha_failover(const std::string& instance, const std::string& group, std::ostream& out, std::ostream& err) {
    auto reply = ask_daemon(instance, control::Command::ha_failover, std::chrono::seconds(10), err, group);
    if (!reply) return 1;
    if (!reply->ok) {
        err << "sluice: ha failover: " << reply->message << "\n";
        return 1;
    }
    out << "sluice: " << reply->message << "\n";
    return 0;
}

std::optional<nlohmann::json> daemon_status(const std::string& instance, std::ostream& err) {
    auto reply = ask_daemon(instance, control::Command::status, std::chrono::seconds(10), err);
    if (!reply) return std::nullopt;
    if (!reply->ok) {
        err << "sluice: " << reply->message << "\n";
        return std::nullopt;
    }
    auto s = nlohmann::json::parse(reply->state, nullptr, false);
    if (s.is_discarded()) {
        err << "sluice: the daemon's state is not JSON\n";
        return std::nullopt;
    }
    return s;
}

}  // namespace sluice::cli
