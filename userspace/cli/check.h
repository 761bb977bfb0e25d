// `sluice check -c FILE`: validate a config file without touching the node.
#pragma once

#include <ostream>
#include <string>

namespace sluice::cli {

// Prepares `path` as run and reload do (pipeline/prepare.h), applying nothing. With problems: prints each as
// FILE:LINE:COLUMN: PATH: MESSAGE on `err` (or, with json, an object with an
// "errors" array on `out`) and returns 1. Without: prints a one-line summary
// (or a JSON object of counts) on `out` and returns 0.
int run_check(const std::string& path, std::ostream& out, std::ostream& err, bool json);

}  // namespace sluice::cli
