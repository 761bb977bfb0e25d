// RAII owners of the sluice_bpf skeleton and of its TC build, sluice_tc
// (bpftool gen skeleton): non-copyable, destroy the skeleton (closing our
// fds; attached programs and pinned maps stay in the kernel) when they go.
#pragma once

#include <memory>

#include "sluice_bpf.skel.h"
#include "sluice_tc.skel.h"

namespace sluice {

struct SkeletonDeleter {
    void operator()(sluice_bpf* skel) const { sluice_bpf::destroy(skel); }
};
using SkeletonPtr = std::unique_ptr<sluice_bpf, SkeletonDeleter>;

struct TcSkeletonDeleter {
    void operator()(sluice_tc* skel) const { sluice_tc::destroy(skel); }
};
using TcSkeletonPtr = std::unique_ptr<sluice_tc, TcSkeletonDeleter>;

}  // namespace sluice
