// Config problems as values: each one names the file, the line and column of
// the offending YAML node, the path of the field and what is wrong, so an
// operator can fix every problem of a file in one pass (docs/config.md "Errors").
#pragma once

#include <string>
#include <vector>

namespace sluice::config {

// 1-based position in the file; line 0 means "no position" (e.g. unreadable file).
struct Location {
    int line = 0;
    int column = 0;
};

struct Diagnostic {
    std::string file;
    Location location;
    std::string path;     // e.g. "policies[1].application[0]"; may be empty
    std::string message;
};

// "FILE:LINE:COLUMN: PATH: MESSAGE"; parts that are unknown are left out.
std::string format_diagnostic(const Diagnostic& diagnostic);

// Collects every problem found while reading one file.
class Diagnostics {
public:
    explicit Diagnostics(std::string file) : file_(std::move(file)) {}

    void error(Location location, std::string path, std::string message);
    bool empty() const { return list_.empty(); }
    size_t size() const { return list_.size(); }
    const std::vector<Diagnostic>& list() const { return list_; }
    const std::string& file() const { return file_; }

    // Problems in file order (line, then column), which is how people read them.
    std::vector<Diagnostic> sorted() const;

private:
    std::string file_;
    std::vector<Diagnostic> list_;
};

}  // namespace sluice::config
