// One way to run commands on a cluster node, whatever the node is: a network
// namespace on this machine (`ip netns exec`) or an Incus instance
// (`incus exec [remote:]NAME --`). Everything perf-test and the cluster do on
// a node goes through this interface.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::cluster {

struct CommandResult {
    int exit_status = -1;     // the command's exit status (128+N for signal N)
    std::string out;          // captured stdout
    std::string err;          // captured stderr
    bool timed_out = false;   // killed at the timeout
};

// A command left running on a node; stopped by its PID, never by name.
struct BackgroundProcess {
    std::string node;
    int pid = 0;              // as seen on the node
    std::string log_path;     // where its stdout+stderr go, on the node
};

class Executor {
public:
    virtual ~Executor() = default;

    // "netns" or "incus", for messages.
    virtual std::string kind() const = 0;

    // Runs argv on node and waits for it, at most `timeout`.
    virtual Result<CommandResult> run(const std::string& node, const std::vector<std::string>& argv,
                                      std::chrono::seconds timeout) = 0;

    // Starts argv on node in the background, output to log_path on the node.
    virtual Result<BackgroundProcess> start(const std::string& node, const std::vector<std::string>& argv,
                                            const std::string& log_path) = 0;

    // Stops a background process by its PID (SIGTERM, then SIGKILL after
    // `grace`), and waits for it to be gone.
    virtual Status stop(const BackgroundProcess& process, std::chrono::seconds grace) = 0;
};

}  // namespace sluice::cluster
