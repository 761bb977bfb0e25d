// Where perf-test finds the source tree it reads profiles/ from and writes
// profiles/history.csv to.
#pragma once

#include <string>

namespace sluice::perftest {

// $SLUICE_SOURCE_DIR; else the working directory or a parent holding
// profiles/ and CMakeLists.txt; else the tree this file was compiled from
// (if it still exists); else "".
std::string source_root();

// `git -C ROOT rev-parse --short HEAD`, or "unknown".
std::string git_revision(const std::string& root);

}  // namespace sluice::perftest
