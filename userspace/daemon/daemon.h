// `sluice run`: load, attach, then serve until SIGTERM (GC, netlink watch,
// reload on SIGHUP). Everything it prints goes to stderr.
#pragma once

#include <string>

namespace sluice {

struct RunOptions {
    std::string config_path;
    std::string instance = "default";
};

// Returns the process exit status.
int run_daemon(const RunOptions& options);

}  // namespace sluice
