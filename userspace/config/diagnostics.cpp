#include "config/diagnostics.h"

#include <algorithm>

namespace sluice::config {

std::string format_diagnostic(const Diagnostic& d) {
    std::string out = d.file;
    if (d.location.line > 0) {
        out += ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column);
    }
    out += ": ";
    if (!d.path.empty()) out += d.path + ": ";
    out += d.message;
    return out;
}

void Diagnostics::error(Location location, std::string path, std::string message) {
    list_.push_back(Diagnostic{file_, location, std::move(path), std::move(message)});
}

std::vector<Diagnostic> Diagnostics::sorted() const {
    std::vector<Diagnostic> out = list_;
    std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
        if (a.location.line != b.location.line) return a.location.line < b.location.line;
        return a.location.column < b.location.column;
    });
    return out;
}

}  // namespace sluice::config
