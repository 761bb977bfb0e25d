// `sluice show egress`: the egress policy's scopes, the DNS proxy's counters
// and the addresses each scope learned, from the running daemon (asked over
// the control socket, so the counters are current).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace sluice::cli {

int show_egress(const std::string& instance, bool json_out, std::ostream& out, std::ostream& err);

// `sluice egress add SCOPE RULE [--at N]`, `delete SCOPE RULE`, `replace SCOPE N RULE`:
// a rule change the running daemon applies without a reload (docs/egress.md).
int egress_rule(const std::string& instance, const std::string& action, const std::string& scope,
                const std::string& rule, size_t position, std::ostream& out, std::ostream& err);

// The table form of the daemon's "egress" state (pure, for tests).
void print_egress(const nlohmann::json& egress, std::ostream& out);

}  // namespace sluice::cli
