// The one way from a config file to what the datapath and the inspection
// stage load: read and validate (config/), compile the maps (compiler/),
// compile the hyperscan databases (inspect/). `sluice check` and the daemon's
// run and reload both call prepare(), so check fails on exactly what run
// fails on, with the same messages.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/compiled_config.h"
#include "config/config.h"
#include "config/diagnostics.h"
#include "inspect/ruleset_db.h"

namespace sluice::pipeline {

// A config ready to apply: nothing in it has touched the node.
struct PreparedConfig {
    config::Config parsed;
    CompiledConfig compiled;
    std::shared_ptr<const inspect::CompiledRulesets> rulesets;
    double compile_ms = 0;  // the compiler's share (the classifier dominates)
};

struct PrepareOptions {
    uint32_t generation = 0;  // the datapath generation the maps are compiled for
    // The ids sessions carry for the config's rulesets. The daemon keeps an id
    // per name across reloads; unset, the ids follow the file's order.
    std::function<Result<std::map<std::string, uint16_t>>(const config::Config&)> ruleset_ids;
};

struct Prepared {
    std::optional<PreparedConfig> config;    // set only when problems is empty
    std::vector<config::Diagnostic> problems;  // every problem found, file order first
    bool ok() const { return config.has_value(); }
    // The problems as one Error: each formatted FILE:LINE:COLUMN: PATH: MESSAGE,
    // one per line; the first one's position is the Error's.
    Error error() const;
};

Prepared prepare(const std::string& path, const PrepareOptions& options = {});

}  // namespace sluice::pipeline
