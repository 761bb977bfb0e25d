// Config nat section → the NAT map entries of one generation (compiled_nat.h).
// Pure, like compile(): no kernel, no file descriptors.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "compiler/compiled_nat.h"
#include "config/config.h"

namespace sluice::compiler {

// Every table of CompiledNat. Fails only for a Config that did not come out
// of validation cleanly (unknown zone or pool, too many rules).
Result<CompiledNat> compile_nat(const config::Config& config, uint8_t generation);

// The parts, one file each.
Status compile_source_nat(const config::Config& config, CompiledNat& out);  // source_nat.cpp
Result<std::vector<nat_pool>> compile_nat_pools(const config::Nat& nat);    // nat_pools.cpp

}  // namespace sluice::compiler
