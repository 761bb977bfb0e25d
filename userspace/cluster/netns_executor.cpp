#include "cluster/netns_executor.h"

#include "cluster/node_commands.h"
#include "cluster/process.h"

namespace sluice::cluster {

NetnsExecutor::NetnsExecutor(std::string prefix) : prefix_(std::move(prefix)) {}

std::string NetnsExecutor::namespace_of(const std::string& node) const {
    return prefix_.empty() ? node : prefix_ + "-" + node;
}

Result<CommandResult> NetnsExecutor::run(const std::string& node, const std::vector<std::string>& argv,
                                         std::chrono::seconds timeout) {
    std::vector<std::string> full{"ip", "netns", "exec", namespace_of(node)};
    full.insert(full.end(), argv.begin(), argv.end());
    return run_local(full, timeout);
}

Result<BackgroundProcess> NetnsExecutor::start(const std::string& node, const std::vector<std::string>& argv,
                                               const std::string& log_path) {
    auto r = run(node, node_commands::background(argv, log_path), std::chrono::seconds(30));
    if (!r) return r.error();
    auto pid = node_commands::parse_pid(*r, node);
    if (!pid) return pid.error();
    return BackgroundProcess{.node = node, .pid = *pid, .log_path = log_path};
}

Status NetnsExecutor::stop(const BackgroundProcess& process, std::chrono::seconds grace) {
    // Namespaces share this machine's PIDs, so the PID is stopped from here.
    auto s = stop_local_pid(process.pid, grace);
    if (!s)
        return make_error("stopping pid " + std::to_string(process.pid) + " on " + process.node + ": " +
                          s.error().message);
    return {};
}

}  // namespace sluice::cluster
