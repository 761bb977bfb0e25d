// Compiles the `egress:` section (docs/egress.md) into CompiledEgress.
#pragma once

#include "common/result.h"
#include "compiler/compiled_egress.h"
#include "config/config.h"

namespace sluice::compiler {

// Errors name the scope or rule (FILE:LINE): a feature this version does not
// enforce, a source overlapping another scope's in the same zone, more port
// ranges over one prefix than an entry holds.
Result<CompiledEgress> compile_egress(const config::Config& config);

}  // namespace sluice::compiler
