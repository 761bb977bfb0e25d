// Running programs on this machine: fork/exec of an argv vector (never a shell
// string), captured stdout/stderr, a timeout that kills the child's whole
// process group, and detached background processes stopped by PID. The
// executors and the netns cluster are built on these.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "cluster/executor.h"
#include "common/result.h"

namespace sluice::cluster {

// Runs argv (argv[0] looked up on PATH) and waits at most `timeout`; at the
// timeout the child's process group gets SIGKILL and timed_out is set. stdin
// is /dev/null. An Error only when the program could not be started at all
// (e.g. not installed: the message says "not found").
Result<CommandResult> run_local(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// How host-level commands (`incus info`, `sg incus-admin -c ...`) are run;
// tests inject their own. The default is run_local.
using CommandRunner =
    std::function<Result<CommandResult>(const std::vector<std::string>& argv, std::chrono::milliseconds timeout)>;
CommandRunner local_runner();

// True when run_local failed because the program does not exist.
bool is_not_found(const Error& error);

// Starts argv detached (own session, reparented away from this process),
// stdout and stderr appended to log_path, stdin /dev/null. Returns its PID.
Result<int> spawn_detached(const std::vector<std::string>& argv, const std::string& log_path);

// Whether PID exists and is not a zombie (on this machine's PID namespace).
bool pid_running(int pid);

// SIGTERM, then SIGKILL after `grace`, then waits (bounded) until PID is gone.
// A PID that is already gone is success.
Status stop_local_pid(int pid, std::chrono::milliseconds grace);

// POSIX sh quoting: 'it'\''s' -- safe for `sh -c` and `sg GROUP -c`.
std::string shell_quote(const std::string& word);
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace sluice::cluster
