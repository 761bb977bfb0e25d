// `sluice bench NAME [options]` and `sluice bench report FILE.jsonl`.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::bench {

void add_bench_commands(CLI::App& app);

}  // namespace sluice::bench
