// A benchmark option that names some of a fixed set of things to measure
// (`--systems`, `--configs`): the names as given, checked, in their order.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::bench {

// "a b" or "a,b" -> {"a", "b"}, each checked against `known`. An unknown
// name, or none at all, is an Error that lists `known`; `what` names one
// of them in that message ("system", "configuration").
Result<std::vector<std::string>> parse_name_list(const std::string& text, const std::vector<std::string>& known,
                                                 const std::string& what);

}  // namespace sluice::bench
