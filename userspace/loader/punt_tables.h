// punt_rulesets: what the fast path does with each ruleset's punted flows
// while the inspection stage is down (maps/punt.h).
#pragma once

#include <vector>

#include "common/result.h"
#include "config/config.h"

namespace sluice {

// Entry Config::ruleset_id(name) for every configured ruleset; every other
// id is cleared, so a flow whose ruleset left the config fails closed.
Status write_punt_rulesets(int fd, const config::Config& config);

}  // namespace sluice
