// Opening an instance's pinned maps for the life of a `show` command.
#pragma once

#include <bpf/bpf.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "loader/session_table.h"

namespace sluice::cli {

class PinnedMap {
public:
    explicit PinnedMap(const std::string& path) : fd_(bpf_obj_get(path.c_str())) {}
    ~PinnedMap() {
        if (fd_ >= 0) close(fd_);
    }
    PinnedMap(const PinnedMap&) = delete;
    PinnedMap& operator=(const PinnedMap&) = delete;
    int fd() const { return fd_; }

private:
    int fd_;
};

// Every session entry under pin_dir; the error says how to get pins when the
// instance never ran.
Result<std::vector<SessionEntry>> read_pinned_sessions(const std::string& pin_dir);

inline double seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace sluice::cli
