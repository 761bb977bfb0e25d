// Port classes: the (protocol slot, port) space cut into elementary classes,
// each the set of points allowed by exactly the same rules. The BPF program
// reads array[slot * 65536 + port] for the class id.
#pragma once

#include <vector>

#include "compiler/class_set.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {

// sets[i] is rule i's field; the result has POLICY_PROTO_SLOTS * 65536 ids,
// slot-major, each interned in `classes`.
std::vector<uint32_t> port_class_array(const std::vector<const AppSet*>& sets, ClassSet& classes);

}  // namespace sluice::compiler
