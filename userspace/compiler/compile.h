// Config → every map entry of one policy generation (maps/policy.h), plus
// zones, interfaces and runtime settings. Pure: no kernel, no file descriptors.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "compiler/compiled_config.h"
#include "config/config.h"

namespace sluice::compiler {

// `generation` is the policy map generation to fill (0 or 1). Fails only for a
// Config that did not come out of config::load_config/parse_config cleanly.
Result<CompiledConfig> compile(const config::Config& config, uint8_t generation,
                               ClassifierGrouping grouping = ClassifierGrouping::when_needed);

}  // namespace sluice::compiler
