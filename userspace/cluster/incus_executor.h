// Executor for Incus instances: `incus exec [remote:]NAME -- argv...`. A node
// is an instance name; with a remote set (e.g. "loss") node "bpfrx-fw0" is
// "loss:bpfrx-fw0"; a node that already has "remote:" is used as is.
// Permission errors are retried through `sg incus-admin -c` (IncusCli).
// Note: a timeout kills the local `incus` client's process group; Incus then
// ends the command in the instance as the exec session closes.
#pragma once

#include <memory>
#include <string>

#include "cluster/executor.h"
#include "cluster/incus_cli.h"

namespace sluice::cluster {

class IncusExecutor : public Executor {
public:
    explicit IncusExecutor(std::string remote = "", std::shared_ptr<IncusCli> incus = nullptr);

    std::string kind() const override { return "incus"; }
    std::string qualified(const std::string& node) const;

    Result<CommandResult> run(const std::string& node, const std::vector<std::string>& argv,
                              std::chrono::seconds timeout) override;
    Result<BackgroundProcess> start(const std::string& node, const std::vector<std::string>& argv,
                                    const std::string& log_path) override;
    Status stop(const BackgroundProcess& process, std::chrono::seconds grace) override;

    IncusCli& incus() { return *incus_; }

private:
    std::string remote_;
    std::shared_ptr<IncusCli> incus_;
};

}  // namespace sluice::cluster
