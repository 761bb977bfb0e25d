// The `incus` command line, as the seed uses it: when incus refuses with a
// permission error ("permission denied" / "not authorized"), the same command
// is retried once as `sg incus-admin -c '<quoted command>'`, and once that has
// worked every later call goes through sg directly. What incus prints to
// stderr reaches sluice's messages only through explain_incus_stderr: its
// first-run notice dropped, and what to do added where incus does not say.
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
    // instance: is_incus_not_found(message); remote unreachable) with
    // incus's message. (Code NotFound means incus is not installed.)
    Result<std::string> instance_status(const std::string& qualified_name);

private:
    Result<CommandResult> run_with_retry(const std::vector<std::string>& args, std::chrono::milliseconds timeout);
    CommandRunner runner_;
    bool use_sg_ = false;
};

// "Status: RUNNING" line of `incus info` output -> "RUNNING"; "" if absent.
std::string parse_incus_status(const std::string& info_output);

// Whether incus's stderr is a permission error worth retrying through sg.
bool is_permission_error(const std::string& stderr_text);

// Whether incus says the daemon is not running ("The incus daemon doesn't
// appear to be started (socket path: ...)").
bool is_daemon_not_started(const std::string& stderr_text);

// Whether incus says the instance (or network, image) does not exist
// ("Error: Instance not found", "Error: Not Found").
bool is_incus_not_found(const std::string& stderr_text);

// The paragraph incus prints before anything else the first time a user
// runs it ("If this is your first time running Incus on this machine, you
// should also run: incus admin init" and the `incus launch` hints up to the
// blank line): advice for a new Incus user, not about sluice's command.
std::string without_first_run_notice(const std::string& stderr_text);

// What to do, appended where incus only says what is wrong: the daemon not
// started -> "start it with scripts/incus-setup.sh up (or your
// distribution's service)". The first-run notice dropped. IncusCli::run
// passes every stderr through this.
std::string explain_incus_stderr(const std::string& stderr_text);
inline constexpr const char* kStartIncusAdvice =
    "start it with scripts/incus-setup.sh up (or your distribution's service, e.g. systemctl start incus)";

}  // namespace sluice::cluster
