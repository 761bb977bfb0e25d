#include "cli/control.h"

#include <net/if.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include "config/check.h"
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

// The running instance's state file, or nullopt (the reason printed).
std::optional<nlohmann::json> running_state(const std::string& instance, InstancePaths& paths, std::ostream& err) {
    if (auto s = prepare_bpffs(); !s) {
        err << "sluice: " << s.error().message << "\n";
        return std::nullopt;
    }
    paths = instance_paths(instance);
    auto state = read_state(paths.state_file());
    if (!state || !process_alive(state->value("pid", 0))) {
        err << "sluice: instance " << instance << " is not running\n";
        return std::nullopt;
    }
    return state;
}

// Sends the daemon `signal`, then waits (30 s at most) for a state file in
// which answered(state) holds; that state, or nullopt (the reason printed).
std::optional<nlohmann::json> signal_and_wait(const InstancePaths& paths, const nlohmann::json& state, int signal,
                                              const std::function<bool(const nlohmann::json&)>& answered,
                                              std::ostream& err) {
    kill(state.value("pid", 0), signal);
    nlohmann::json after;
    bool ok = wait_until(
        [&] {
            auto s = read_state(paths.state_file());
            if (s && answered(*s)) {
                after = *s;
                return true;
            }
            return false;
        },
        std::chrono::seconds(30));
    if (!ok) {
        err << "sluice: the daemon did not answer within 30s\n";
        return std::nullopt;
    }
    return after;
}

}  // namespace

int reload(const std::string& instance, std::ostream& out, std::ostream& err) {
    InstancePaths paths;
    auto state = running_state(instance, paths, err);
    if (!state) return 1;
    std::string config = state->value("config", "");
    std::ostringstream summary;
    if (config::run_check(config, summary, err, false) != 0) {
        err << "sluice: reload rejected; the running config stays in force\n";
        return 1;
    }
    uint64_t before = state->value("reloads", uint64_t{0});
    auto answer = signal_and_wait(
        paths, *state, SIGHUP, [&](const nlohmann::json& s) { return s.value("reloads", uint64_t{0}) > before; }, err);
    if (!answer) return 1;
    nlohmann::json after = *answer;
    if (!after["last_reload"].value("ok", false)) {
        err << "sluice: reload rejected: " << after["last_reload"].value("message", "") << "\n";
        return 1;
    }
    out << "sluice: reloaded " << config << " (config generation " << after.value("config_generation", 0) << ")\n";
    return 0;
}

int inspect_stage(const std::string& instance, bool start, std::ostream& out, std::ostream& err) {
    InstancePaths paths;
    auto state = running_state(instance, paths, err);
    if (!state) return 1;
    nlohmann::json inspect = state->value("inspect", nlohmann::json::object());
    if (inspect.value("rulesets", nlohmann::json::array()).empty()) {
        err << "sluice: instance " << instance << " has no inspect rulesets: there is no stage to "
            << (start ? "start" : "stop") << "\n";
        return 1;
    }
    uint64_t before = inspect.value("changes", uint64_t{0});
    auto answer = signal_and_wait(
        paths, *state, start ? SIGUSR2 : SIGUSR1,
        [&](const nlohmann::json& s) {
            return s.value("inspect", nlohmann::json::object()).value("changes", uint64_t{0}) > before;
        },
        err);
    if (!answer) return 1;
    nlohmann::json after = answer->value("inspect", nlohmann::json::object());
    bool running = after.value("running", false);
    if (running != start) {
        err << "sluice: the inspection stage is " << (running ? "still running" : "not running")
            << "; see the daemon's log\n";
        return 1;
    }
    out << "sluice: inspection stage " << (start ? "running" : "stopped: punted flows get their ruleset's fail-mode")
        << "\n";
    return 0;
}

int down(const std::string& instance, std::ostream& out, std::ostream& err) {
    if (auto s = prepare_bpffs(); !s) {
        err << "sluice: " << s.error().message << "\n";
        return 1;
    }
    InstancePaths paths = instance_paths(instance);
    auto state = read_state(paths.state_file());
    int status = 0;
    if (state) {
        int pid = state->value("pid", 0);
        if (pid != getpid() && process_alive(pid)) {
            kill(pid, SIGTERM);
            if (!wait_until([&] { return !process_alive(pid); }, std::chrono::seconds(10))) {
                err << "sluice: daemon (pid " << pid << ") did not stop after SIGTERM\n";
                return 1;
            }
        }
        // A daemon that died without detaching (SIGKILL) leaves programs attached.
        for (const auto& itf : state->value("interfaces", nlohmann::json::array())) {
            if (!itf.contains("device")) continue;
            std::string device = itf["device"];
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
