// `sluice perf-test [ipv4|ipv6|compare|profile|all|history] [--env E]
// [--prefix P] [--quick] [--passes N] [--baseline kernel|nftables] [--json]
// [--svg FILE]`, run through a CLI11 callback; a failure throws
// CLI::RuntimeError(exit status), so main.cpp needs no dispatch code.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::perftest {

void add_perf_test_commands(CLI::App& app);

}  // namespace sluice::perftest
