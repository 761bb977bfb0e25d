// The `incus` command line, as the seed uses it: when incus refuses with a
// permission error ("permission denied" / "not authorized"), the same command
// is retried once as `sg incus-admin -c '<quoted command>'`, and once that has
// worked every later call goes through sg directly.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cluster/executor.h"
#include "cluster/process.h"

namespace sluice::cluster {

class IncusCli {
public:
    explicit IncusCli(CommandRunner runner = local_runner());

    // Runs `incus ARGS...`. An Error when incus is not installed (is_not_found).
    Result<CommandResult> run(const std::vector<std::string>& args, std::chrono::milliseconds timeout);

    // True once a permission error made us switch to `sg incus-admin -c`.
    bool using_sg() const { return use_sg_; }

    // The instance's state per `incus info [remote:]NAME` ("RUNNING",
    // "STOPPED", ...); an Error when incus fails (not installed, no such
    // instance, remote unreachable) with incus's message.
    Result<std::string> instance_status(const std::string& qualified_name);

private:
    CommandRunner runner_;
    bool use_sg_ = false;
};

// "Status: RUNNING" line of `incus info` output -> "RUNNING"; "" if absent.
std::string parse_incus_status(const std::string& info_output);

// Whether incus's stderr is a permission error worth retrying through sg.
bool is_permission_error(const std::string& stderr_text);

}  // namespace sluice::cluster
