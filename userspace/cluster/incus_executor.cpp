#include "cluster/incus_executor.h"

#include "cluster/node_commands.h"

namespace sluice::cluster {

IncusExecutor::IncusExecutor(std::string remote, std::shared_ptr<IncusCli> incus)
    : remote_(std::move(remote)), incus_(incus ? std::move(incus) : std::make_shared<IncusCli>()) {
    if (!remote_.empty() && remote_.back() == ':') remote_.pop_back();
}

std::string IncusExecutor::qualified(const std::string& node) const {
    if (remote_.empty() || node.find(':') != std::string::npos) return node;
    return remote_ + ":" + node;
}

Result<CommandResult> IncusExecutor::run(const std::string& node, const std::vector<std::string>& argv,
                                         std::chrono::seconds timeout) {
    std::vector<std::string> args{"exec", qualified(node), "--"};
    args.insert(args.end(), argv.begin(), argv.end());
    return incus_->run(args, timeout);
}

Result<BackgroundProcess> IncusExecutor::start(const std::string& node, const std::vector<std::string>& argv,
                                               const std::string& log_path) {
    auto r = run(node, node_commands::background(argv, log_path), std::chrono::seconds(60));
    if (!r) return r.error();
    auto pid = node_commands::parse_pid(*r, qualified(node));
    if (!pid) return pid.error();
    return BackgroundProcess{.node = node, .pid = *pid, .log_path = log_path};
}

Status IncusExecutor::stop(const BackgroundProcess& process, std::chrono::seconds grace) {
    int g = static_cast<int>(grace.count());
    auto r = run(process.node, node_commands::stop(process.pid, g),
                 std::chrono::seconds(node_commands::stop_timeout_seconds(g)));
    if (!r) return r.error();
    if (r->exit_status != 0)
        return make_error("stopping pid " + std::to_string(process.pid) + " on " + qualified(process.node) +
                          " failed (exit " + std::to_string(r->exit_status) + "): " + r->err);
    return {};
}

}  // namespace sluice::cluster
