// The running config's NAT section as the state file carries it, for
// `sluice show nat`: every rule (kind, index, name, what it matches and what
// it translates to) and every pool with its address ranges and ports.
#pragma once

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace sluice {

// {"rules": [...], "pools": [...]}; rule kinds "source" | "destination" |
// "static" | "nptv6", index = position in that list (the rule_id the
// datapath records). Pool ranges as {"family", "first", "last"} addresses.
nlohmann::json nat_state_json(const config::Nat& nat);

}  // namespace sluice
