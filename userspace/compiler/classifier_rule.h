// One rule as the classifier sees it (maps/policy.h): a scope (the zone pair
// of a policy, or a filter), the five fields, and what a match means. Policies
// and filter rules both become these; compile_classifier turns a list of them
// into the tables of one generation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/compiled_config.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {

struct ClassifierRule {
    classifier_scope_kind kind = CLASSIFIER_SCOPE_POLICY;
    uint16_t scope_a = 0, scope_b = 0;   // (from zone, to zone), or (filter id, 0)
    PrefixSet source, destination;
    AppSet ports;                        // destination port / ICMP type / protocol number, per slot
    AppSet source_ports;                 // `any` unless a filter rule names source-port
    bool decides = true;                 // false: a filter `count` rule; evaluation goes on
    bool counted = false;                // filter rules: a match is counted at `id`
    uint32_t id = 0;                     // policy index, or filter rule slot
    uint8_t action = 0;                  // enum policy_action / enum filter_action
    uint16_t ruleset_id = 0;
    std::string where;                   // for errors: `filters.wan-in[3] "dns-seen"`
    ErrorLocation at;                    // its position in the file (no path: `where` names it)
};

// The tables of one generation. Fails when the rules need more cross-product
// cells than a generation holds, dense (CLASSIFIER_CROSS_PER_GEN) and sparse
// (CLASSIFIER_SPARSE_PER_GEN) together, even split into groups by shape; when
// they combine into too many classes for the compiler's memory; when they
// have more than CLASSIFIER_MAX_RESULTS outcomes; or when a packet could be
// counted by more than CLASSIFIER_MAX_COUNTED filter rules. The message says
// which. Rules go in one group of dense tables when they fit, else in up to
// CLASSIFIER_GROUPS groups by shape (or as `grouping` says, for tests).
Result<CompiledClassifier> compile_classifier(const std::vector<ClassifierRule>& rules, uint8_t generation,
                                              ClassifierGrouping grouping = ClassifierGrouping::when_needed);

}  // namespace sluice::compiler
