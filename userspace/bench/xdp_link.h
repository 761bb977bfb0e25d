// An XDP program a benchmark attaches itself (not sluice's: the receiver's
// counter, the minimal redirect), held by a BPF link. The program leaves the
// device when the link's last file descriptor closes: this object's
// destructor, or the kernel's cleanup of this process however it ends, so a
// run that fails or is killed leaves no program behind.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice::bench {

class XdpLink {
public:
    // Attaches the program `prog_fd` in native (driver) mode to DEV in the
    // network namespace NETNS: an Error, with the kernel's reason, when the
    // driver cannot run it natively — never a silent fallback to generic.
    static Result<XdpLink> attach_native(const std::string& netns, const std::string& dev, int prog_fd);
    XdpLink(XdpLink&& other) noexcept;
    XdpLink& operator=(XdpLink&& other) noexcept;
    XdpLink(const XdpLink&) = delete;
    XdpLink& operator=(const XdpLink&) = delete;
    ~XdpLink();

private:
    explicit XdpLink(int fd) : fd_(fd) {}
    int fd_ = -1;
};

// The ifindex of DEV in NETNS.
Result<uint32_t> ifindex_in(const std::string& netns, const std::string& dev);

}  // namespace sluice::bench
