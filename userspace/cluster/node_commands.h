// The commands both executors run on a node to start a background process and
// to stop one by PID: plain POSIX sh, so they work in any instance image.
#pragma once

#include <string>
#include <vector>

#include "cluster/executor.h"
#include "common/result.h"

namespace sluice::cluster::node_commands {

// sh -c 'ARGV </dev/null >LOG 2>&1 & echo $!'
std::vector<std::string> background(const std::vector<std::string>& argv, const std::string& log_path);
// The PID `background` printed.
Result<int> parse_pid(const CommandResult& result, const std::string& node);
// sh -c '<SIGTERM, wait up to grace, SIGKILL, wait>' sh PID GRACE
std::vector<std::string> stop(int pid, int grace_seconds);
// sh -c '<wait up to SECONDS for PID to end>' sh PID SECONDS: exit 0 once
// it is gone (a zombie counts as gone), 1 if it still runs. Sends nothing.
std::vector<std::string> wait_gone(int pid, int seconds);
// Timeout for running `stop` on a node.
inline int stop_timeout_seconds(int grace_seconds) {
    return grace_seconds + 15;
}

}  // namespace sluice::cluster::node_commands
