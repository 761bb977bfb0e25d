// Which node of the pair this process is (docs/ha.md "Configuration"): the
// same file runs on both nodes, so the name comes from outside it —
// `sluice run --node NAME`, else the first line of /etc/sluice/node.
#pragma once

#include <string>

#include "common/result.h"
#include "config/ha_config.h"

namespace sluice::ha {

inline constexpr const char* kNodeFile = "/etc/sluice/node";

// The node's name, checked against ha.nodes. `cli_node` wins over the file;
// with no ha: section a --node is refused (it would be ignored).
Result<std::string> resolve_node(const config::Ha& ha, const std::string& cli_node,
                                 const std::string& node_file = kNodeFile);

}  // namespace sluice::ha
