#include "cli/control.h"

#include <net/if.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

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

// Asks the instance's daemon `command` through its control socket; the
// reply, or nullopt with the reason printed.
std::optional<control::Reply> ask_daemon(const std::string& instance, control::Command command,
                                         std::chrono::seconds timeout, std::ostream& err) {
    if (auto s = prepare_bpffs(); !s) {
        err << "sluice: " << s.error().message << "\n";
        return std::nullopt;
    }
    const InstancePaths paths = instance_paths(instance);
    auto reply = call_daemon(control::socket_path(paths.state_dir), control::Request{.command = command}, timeout);
    if (!reply) {
        if (reply.error().code == ErrorCode::NotFound) err << "sluice: instance " << instance << " is not running\n";
        else err << "sluice: " << reply.error().message << "\n";
        return std::nullopt;
    }
    return reply.value();
}

}  // namespace

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
            for (TcHook hook : {TcHook::Egress, TcHook::Ingress}) {
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

}  // namespace sluice::cli
