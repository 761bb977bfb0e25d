// Application classes: the (protocol slot, port) space cut into elementary
// classes, each the set of points allowed by exactly the same rules. The BPF
// program looks up port_class[slot * 65536 + port] for a class id, then
// app_bits[class] for the rule bitset.
#pragma once

#include <vector>

#include "compiler/compiled_config.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {

// Fills tables.port_class and tables.app_bits; tables.generation and
// tables.words must be set.
void build_port_classes(const std::vector<ResolvedRule>& rules, CompiledPolicyTables& tables);

}  // namespace sluice::compiler
