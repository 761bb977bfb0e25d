// Executor for nodes that are network namespaces on this machine:
// `ip netns exec <namespace> argv...`. With a prefix P, node "fw0" is the
// namespace "P-fw0" (the netns cluster's naming); without one the node name is
// the namespace name. PIDs are this machine's PIDs (namespaces share them).
#pragma once

#include <string>

#include "cluster/executor.h"

namespace sluice::cluster {

class NetnsExecutor : public Executor {
public:
    explicit NetnsExecutor(std::string prefix = "");

    std::string kind() const override { return "netns"; }
    // The namespace a node maps to.
    std::string namespace_of(const std::string& node) const;

    Result<CommandResult> run(const std::string& node, const std::vector<std::string>& argv,
                              std::chrono::seconds timeout) override;
    Result<BackgroundProcess> start(const std::string& node, const std::vector<std::string>& argv,
                                    const std::string& log_path) override;
    Status stop(const BackgroundProcess& process, std::chrono::seconds grace) override;

private:
    std::string prefix_;
};

}  // namespace sluice::cluster
