// The running config's NAT section as the state file carries it, for
// `sluice show nat`: every rule (kind, index, name, what it matches and what
// it translates to) and every pool with its address ranges and ports.
#pragma once

#include "config/config.h"
#include "daemon/published_state.h"

namespace sluice {

// Rule kinds "source" | "destination" | "static" | "nptv6", index = position
// in that list (the rule_id the datapath records).
state::Nat nat_state(const config::Nat& nat);

}  // namespace sluice
