// Checks for command-line numbers whose messages say what the option takes.
// CLI11's own PositiveNumber / NonNegativeNumber answer "-1" or "abc" with
// "Value -1 not in range 0.000000 to 1797693134862315708...": the whole range
// of a double, and "in range 0" for a 0 that is refused.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice {

// A number above 0 ("2", "0.5").
CLI::Validator positive_number();
// A number of 0 or more.
CLI::Validator non_negative_number();
// A whole number of 0 or more; `meaning` ends the message ("0: no limit").
CLI::Validator whole_number(const std::string& meaning);

}  // namespace sluice
