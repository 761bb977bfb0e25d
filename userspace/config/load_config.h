// Reading a config file into the model, with every problem found (docs/config.md
// "Errors"). A file with any error yields no Config: nothing half-valid leaks
// into the compiler.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "config/diagnostics.h"

namespace sluice::config {

struct LoadResult {
    std::optional<Config> config;           // set only when diagnostics is empty
    std::vector<Diagnostic> diagnostics;    // in file order
    bool ok() const { return config.has_value(); }
};

// Parses YAML text; `file_name` is what diagnostics print as FILE.
LoadResult parse_config(const std::string& text, const std::string& file_name);

// Reads and parses a file; an unreadable file is one diagnostic without a line.
LoadResult read_config_file(const std::string& path);

// The same as a Result: on failure the Error's message holds every diagnostic,
// formatted, one per line.
Result<Config> load_config(const std::string& path);

}  // namespace sluice::config
