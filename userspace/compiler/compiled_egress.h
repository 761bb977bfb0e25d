// The egress policy's datapath tables (maps/egress.h) as the compiler emits
// them: which (zone, source prefix) each scope governs, and each scope's
// address rules, one entry per prefix with every rule that covers it in rule
// order (so the trie's longest match still decides by first match).
#pragma once

#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

struct CompiledEgress {
    bool enabled = false;
    std::vector<std::pair<egress_source_key_v4, egress_scope_ref>> sources_v4;
    std::vector<std::pair<egress_source_key_v6, egress_scope_ref>> sources_v6;
    std::vector<std::pair<egress_source_key_v4, egress_prefix_rules>> prefixes_v4;
    std::vector<std::pair<egress_source_key_v6, egress_prefix_rules>> prefixes_v6;
};

}  // namespace sluice
