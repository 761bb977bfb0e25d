// `sluice reload` and `sluice down`: act on a running (or dead) instance.
#pragma once

#include <ostream>
#include <string>

namespace sluice::cli {

// Validates the instance's config file here first (errors print and nothing
// changes), then asks the daemon to apply it and waits for its answer.
int reload(const std::string& instance, std::ostream& out, std::ostream& err);

// Stops the daemon if it runs, detaches what is still attached, removes pins
// and state.
int down(const std::string& instance, std::ostream& out, std::ostream& err);

// `sluice inspect stop|start`: takes the running instance's inspection stage
// down (punted flows get their ruleset's fail-mode) or back up, and waits
// for the daemon to confirm.
int inspect_stage(const std::string& instance, bool start, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
