// Where perf-test finds the source tree it reads profiles/ from, and where it
// keeps its history.
#pragma once

#include <string>

namespace sluice::perftest {

// $SLUICE_SOURCE_DIR; else the working directory or a parent holding
// profiles/ and CMakeLists.txt; else the tree this file was compiled from
// (if it still exists); else "".
std::string source_root();

// The history file when --history is not given: $SLUICE_STATE_DIR (default
// /var/lib/sluice) /perf-test/history.csv. A state directory, not the
// source tree: running perf-test leaves a clone as it was.
std::string default_history_path();

// `git -C ROOT rev-parse --short HEAD`, or "unknown".
std::string git_revision(const std::string& root);

}  // namespace sluice::perftest
