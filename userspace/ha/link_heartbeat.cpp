#include "ha/link_heartbeat.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice::ha {

Result<std::unique_ptr<LinkHeartbeat>> LinkHeartbeat::open(const std::string& interface) {
    std::unique_ptr<LinkHeartbeat> h(new LinkHeartbeat());
    h->interface_ = interface;
    h->ifindex_ = static_cast<int>(if_nametoindex(interface.c_str()));
    if (h->ifindex_ == 0) return errno_error("HA link heartbeat: no interface " + interface, errno);
    h->fd_ = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(kLinkHeartbeatEtherType));
    if (h->fd_ < 0) return errno_error("HA link heartbeat: cannot open a packet socket on " + interface, errno);
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(kLinkHeartbeatEtherType);
    sll.sll_ifindex = h->ifindex_;
    if (bind(h->fd_, reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) != 0)
        return errno_error("HA link heartbeat: cannot bind to " + interface, errno);
    return h;
}

LinkHeartbeat::~LinkHeartbeat() {
    if (fd_ >= 0) close(fd_);
}

bool LinkHeartbeat::send(const std::vector<uint8_t>& payload) {
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(kLinkHeartbeatEtherType);
    to.sll_ifindex = ifindex_;
    to.sll_halen = ETH_ALEN;
    std::memset(to.sll_addr, 0xff, ETH_ALEN);
    return sendto(fd_, payload.data(), payload.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&to), sizeof(to)) ==
           static_cast<ssize_t>(payload.size());
}

std::vector<uint8_t> LinkHeartbeat::receive() {
    std::vector<uint8_t> buf(2048);
    for (;;) {
        sockaddr_ll from{};
        socklen_t len = sizeof(from);
        ssize_t n = recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return {};
        }
        if (from.sll_pkttype == PACKET_OUTGOING || n == 0) continue;  // our own frames
        buf.resize(static_cast<size_t>(n));
        return buf;
    }
}

}  // namespace sluice::ha
