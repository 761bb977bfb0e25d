// RAII owner of the sluice_bpf skeleton (bpftool gen skeleton): non-copyable,
// destroys the skeleton (closing our fds; attached programs and pinned maps
// stay in the kernel) when it goes.
#pragma once

#include <memory>

#include "sluice_bpf.skel.h"

namespace sluice {

struct SkeletonDeleter {
    void operator()(sluice_bpf* skel) const { sluice_bpf::destroy(skel); }
};
using SkeletonPtr = std::unique_ptr<sluice_bpf, SkeletonDeleter>;

}  // namespace sluice
