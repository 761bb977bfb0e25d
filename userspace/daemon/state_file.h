// The running instance's description under /run (pid, config file, attached
// interfaces, names of zones and policies): what `reload`, `down` and `show`
// need besides the pinned maps.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"

namespace sluice {

Status write_state(const std::string& path, const nlohmann::json& state);
std::optional<nlohmann::json> read_state(const std::string& path);
bool process_alive(int pid);

}  // namespace sluice
