// Source and destination LPM tables. Each distinct prefix P of a field (plus
// /0 of each family) maps to the rules whose field contains a prefix Q ⊇ P
// (including `any` rules). The kernel's longest-prefix match then returns, for
// an address a, the entry of the longest P containing a — and every Q that
// contains a contains that P — so the value is exactly the rules matching a.
#pragma once

#include <vector>

#include "compiler/compiled_config.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {

enum class AddressField { source, destination };

// Fills tables.src_v4/src_v6 (or dst_*) for the rules; tables.generation and
// tables.words must be set.
void build_lpm_tables(const std::vector<ResolvedRule>& rules, AddressField field,
                      CompiledPolicyTables& tables);

}  // namespace sluice::compiler
