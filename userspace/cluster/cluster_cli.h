// `sluice cluster up|down|status [--env NAME] [--prefix P] [--json]`. The
// subcommands run through CLI11 callbacks; a failure throws
// CLI::RuntimeError(exit code), so main.cpp needs no dispatch code.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cluster {

void add_cluster_commands(CLI::App& app);

}  // namespace sluice::cluster
