// The running instance's description under /run (pid, config file, attached
// interfaces, names of zones and policies): what `reload`, `down` and `show`
// need besides the pinned maps.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"
#include "daemon/published_state.h"

namespace sluice {

// Writes atomically: readers see the old file or the new one.
Status write_state(const std::string& path, const state::PublishedState& state);
// The file's state: an Error with code NotFound when there is no file, and
// one naming the field when the file does not parse as this sluice's state.
Result<state::PublishedState> read_state(const std::string& path);
bool process_alive(int pid);

}  // namespace sluice
