#include "perftest/paths.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "cluster/process.h"

namespace sluice::perftest {

namespace fs = std::filesystem;

namespace {

bool looks_like_root(const fs::path& dir) {
    std::error_code ec;
    return fs::is_directory(dir / "profiles", ec) && fs::is_regular_file(dir / "CMakeLists.txt", ec);
}

}  // namespace

std::string source_root() {
    if (const char* env = std::getenv("SLUICE_SOURCE_DIR"); env && *env) return env;
    std::error_code ec;
    for (fs::path dir = fs::current_path(ec); !ec && !dir.empty(); dir = dir.parent_path()) {
        if (looks_like_root(dir)) return dir.string();
        if (dir == dir.root_path()) break;
    }
    // This file is userspace/perftest/paths.cpp in the tree it was built from.
    std::string_view self = __FILE__;
    constexpr std::string_view tail = "userspace/perftest/paths.cpp";
    if (self.size() > tail.size() && self.substr(self.size() - tail.size()) == tail) {
        fs::path root = std::string(self.substr(0, self.size() - tail.size()));
        if (looks_like_root(root)) return root.lexically_normal().string();
    }
    return "";
}

std::string default_history_path() {
    const char* state = std::getenv("SLUICE_STATE_DIR");
    const std::filesystem::path dir = state && *state ? state : "/var/lib/sluice";
    return (dir / "perf-test" / "history.csv").string();
}

std::string git_revision(const std::string& root) {
    if (root.empty()) return "unknown";
    auto r = cluster::run_local({"git", "-C", root, "rev-parse", "--short", "HEAD"}, std::chrono::seconds(10));
    if (!r || r->exit_status != 0) return "unknown";
    std::string rev = r->out;
    while (!rev.empty() && (rev.back() == '\n' || rev.back() == '\r' || rev.back() == ' ')) rev.pop_back();
    return rev.empty() ? "unknown" : rev;
}

}  // namespace sluice::perftest
