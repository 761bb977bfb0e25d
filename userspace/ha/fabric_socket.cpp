#include "ha/fabric_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice::ha {
namespace {

// Room for a bulk sync's burst (hundreds of datagrams) without drops.
constexpr int kSocketBuffer = 8 << 20;

socklen_t fill(const config::HaAddress& a, uint16_t port, sockaddr_storage& ss) {
    std::memset(&ss, 0, sizeof(ss));
    if (a.family == config::Family::ipv4) {
        auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        std::memcpy(&s4->sin_addr, a.addr.data(), 4);
        return sizeof(sockaddr_in);
    }
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    std::memcpy(&s6->sin6_addr, a.addr.data(), 16);
    return sizeof(sockaddr_in6);
}

bool same_endpoint(const sockaddr_storage& a, const sockaddr_storage& b) {
    if (a.ss_family != b.ss_family) return false;
    if (a.ss_family == AF_INET) {
        const auto& x = reinterpret_cast<const sockaddr_in&>(a);
        const auto& y = reinterpret_cast<const sockaddr_in&>(b);
        return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
    }
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in6&>(b);
    return x.sin6_port == y.sin6_port && std::memcmp(&x.sin6_addr, &y.sin6_addr, 16) == 0;
}

}  // namespace

Result<std::unique_ptr<FabricSocket>> FabricSocket::open(const std::string& interface, const config::HaAddress& self,
                                                         const config::HaAddress& peer, uint16_t port) {
    std::unique_ptr<FabricSocket> s(new FabricSocket());
    const int domain = self.family == config::Family::ipv4 ? AF_INET : AF_INET6;
    s->fd_ = socket(domain, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd_ < 0) return errno_error("HA fabric: cannot create a UDP socket", errno);
    const int one = 1;
    setsockopt(s->fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(s->fd_, SOL_SOCKET, SO_RCVBUFFORCE, &kSocketBuffer, sizeof(kSocketBuffer));
    setsockopt(s->fd_, SOL_SOCKET, SO_SNDBUFFORCE, &kSocketBuffer, sizeof(kSocketBuffer));
    // Interactive precedence: heartbeats must not queue behind bulk data on the fabric.
    const int tos = 0xc0;
    if (domain == AF_INET) setsockopt(s->fd_, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
    else setsockopt(s->fd_, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
    if (setsockopt(s->fd_, SOL_SOCKET, SO_BINDTODEVICE, interface.c_str(), interface.size()) != 0)
        return errno_error("HA fabric: cannot bind to interface " + interface, errno);
    sockaddr_storage local{}, remote{};
    socklen_t len = fill(self, port, local);
    if (bind(s->fd_, reinterpret_cast<sockaddr*>(&local), len) != 0)
        return errno_error("HA fabric: cannot bind " + self.text + " port " + std::to_string(port) +
                               " (is the address on " + interface + "?)",
                           errno);
    s->peer_len_ = fill(peer, port, remote);
    s->peer_ = remote;
    return s;
}

FabricSocket::~FabricSocket() {
    if (fd_ >= 0) close(fd_);
}

bool FabricSocket::send(const std::vector<uint8_t>& datagram) {
    if (sendto(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&peer_),
               peer_len_) == static_cast<ssize_t>(datagram.size()))
        return true;
    last_errno_ = errno;
    return false;
}

std::vector<uint8_t> FabricSocket::receive() {
    std::vector<uint8_t> buf(kMaxDatagramReceive);
    for (;;) {
        sockaddr_storage from{};
        socklen_t from_len = sizeof(from);
        ssize_t n = recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n >= 0) {
            if (!same_endpoint(from, peer_)) {
                not_from_peer_ += 1;
                continue;
            }
            if (n == 0) continue;  // an empty datagram says nothing
            buf.resize(static_cast<size_t>(n));
            return buf;
        }
        if (errno == EINTR) continue;
        return {};
    }
}

}  // namespace sluice::ha
