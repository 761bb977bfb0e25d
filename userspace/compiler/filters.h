// Stateless filters (config `filters:`): each filter gets an id (1-based, file
// order), each of its rules a counter slot, and every rule becomes a
// ClassifierRule in the filter's scope.
#pragma once

#include <vector>

#include "common/result.h"
#include "compiler/classifier_rule.h"
#include "config/config.h"

namespace sluice::compiler {

struct ResolvedFilters {
    std::vector<CompiledFilter> filters;
    std::vector<ClassifierRule> rules;
};

Result<ResolvedFilters> resolve_filters(const config::Config& config);

// 1-based id of a filter name, 0 if unknown.
uint16_t filter_id(const config::Config& config, const std::string& name);

}  // namespace sluice::compiler
