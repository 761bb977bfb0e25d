#include "bench/xdp_link.h"

#include <bpf/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "bench/netns_thread.h"

namespace sluice::bench {

Result<uint32_t> ifindex_in(const std::string& netns, const std::string& dev) {
    uint32_t ifindex = 0;
    auto s = in_netns(netns, [&]() -> Status {
        ifindex = if_nametoindex(dev.c_str());
        if (ifindex == 0) return errno_error("no interface " + dev + " in " + netns, errno);
        return {};
    });
    if (!s) return s.error();
    return ifindex;
}

Result<XdpLink> XdpLink::attach_native(const std::string& netns, const std::string& dev, int prog_fd) {
    int fd = -1;
    // The kernel finds the ifindex in the namespace of the thread that
    // creates the link.
    auto s = in_netns(netns, [&]() -> Status {
        const unsigned ifindex = if_nametoindex(dev.c_str());
        if (ifindex == 0) return errno_error("no interface " + dev + " in " + netns, errno);
        LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_DRV_MODE);
        fd = bpf_link_create(prog_fd, static_cast<int>(ifindex), BPF_XDP, &opts);
        if (fd < 0) return errno_error("attaching an XDP program natively to " + dev + " in " + netns, -fd);
        return {};
    });
    if (!s) return s.error();
    return XdpLink(fd);
}

XdpLink::XdpLink(XdpLink&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

XdpLink& XdpLink::operator=(XdpLink&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

XdpLink::~XdpLink() {
    if (fd_ >= 0) close(fd_);
}

}  // namespace sluice::bench
