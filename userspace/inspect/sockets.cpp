#include "inspect/sockets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice::inspect {
namespace {

Error sys_error(const std::string& what) { return errno_error(what, errno); }

Status set_int(int fd, int level, int name, int value, const char* what) {
    if (setsockopt(fd, level, name, &value, sizeof(value)) != 0) return sys_error(std::string("setsockopt ") + what);
    return {};
}

Status make_transparent(int fd, int family) {
    if (family == AF_INET) return set_int(fd, SOL_IP, IP_TRANSPARENT, 1, "IP_TRANSPARENT");
    return set_int(fd, SOL_IPV6, IPV6_TRANSPARENT, 1, "IPV6_TRANSPARENT");
}

}  // namespace

sockaddr_storage Endpoint::sockaddr(socklen_t& len) const {
    sockaddr_storage ss{};
    if (family == AF_INET) {
        auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
        sin->sin_family = AF_INET;
        sin->sin_addr.s_addr = addr[0];
        sin->sin_port = port;
        len = sizeof(*sin);
    } else {
        auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
        sin6->sin6_family = AF_INET6;
        std::memcpy(&sin6->sin6_addr, addr, 16);
        sin6->sin6_port = port;
        len = sizeof(*sin6);
    }
    return ss;
}

Endpoint Endpoint::from(const sockaddr_storage& ss) {
    Endpoint e;
    e.family = ss.ss_family;
    if (ss.ss_family == AF_INET) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
        e.addr[0] = sin->sin_addr.s_addr;
        e.port = sin->sin_port;
    } else {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
        std::memcpy(e.addr, &sin6->sin6_addr, 16);
        e.port = sin6->sin6_port;
    }
    return e;
}

std::string Endpoint::text() const {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family, addr, buf, sizeof(buf));
    std::string port_text = std::to_string(ntohs(port));
    return family == AF_INET ? std::string(buf) + ":" + port_text : "[" + std::string(buf) + "]:" + port_text;
}

Result<int> open_stage_listener(int family, int type, uint16_t port_host_order) {
    int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return sys_error("inspection stage: socket");
    auto fail = [fd](Error e) -> Result<int> {
        close(fd);
        return e;
    };
    if (auto s = set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR"); !s) return fail(s.error());
    if (auto s = set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT"); !s) return fail(s.error());
    if (auto s = make_transparent(fd, family); !s) return fail(s.error());
    if (family == AF_INET6)
        if (auto s = set_int(fd, SOL_IPV6, IPV6_V6ONLY, 1, "IPV6_V6ONLY"); !s) return fail(s.error());
    if (type == SOCK_DGRAM) {
        auto s = family == AF_INET ? set_int(fd, SOL_IP, IP_RECVORIGDSTADDR, 1, "IP_RECVORIGDSTADDR")
                                   : set_int(fd, SOL_IPV6, IPV6_RECVORIGDSTADDR, 1, "IPV6_RECVORIGDSTADDR");
        if (!s) return fail(s.error());
    }
    const Endpoint local = loopback_endpoint(family, port_host_order);
    socklen_t len = 0;
    sockaddr_storage ss = local.sockaddr(len);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0)
        return fail(sys_error("inspection stage: bind " + local.text()));
    if (type == SOCK_STREAM && listen(fd, 4096) != 0) return fail(sys_error("inspection stage: listen"));
    return fd;
}

Endpoint loopback_endpoint(int family, uint16_t port_host_order) {
    Endpoint e;
    e.family = family;
    if (family == AF_INET) e.addr[0] = htonl(INADDR_LOOPBACK);
    else e.addr[3] = htonl(1);
    e.port = htons(port_host_order);
    return e;
}

Result<uint16_t> bound_port(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return sys_error("getsockname");
    return static_cast<uint16_t>(ntohs(Endpoint::from(ss).port));
}

Result<int> open_transparent(int type, const Endpoint& local) {
    int fd = socket(local.family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return sys_error("socket");
    auto fail = [fd](Error e) -> Result<int> {
        close(fd);
        return e;
    };
    if (auto s = set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR"); !s) return fail(s.error());
    if (auto s = make_transparent(fd, local.family); !s) return fail(s.error());
    if (local.family == AF_INET6)
        if (auto s = set_int(fd, SOL_IPV6, IPV6_V6ONLY, 1, "IPV6_V6ONLY"); !s) return fail(s.error());
    socklen_t len = 0;
    sockaddr_storage ss = local.sockaddr(len);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) return fail(sys_error("bind " + local.text()));
    return fd;
}

Status connect_to(int fd, const Endpoint& remote) {
    socklen_t len = 0;
    sockaddr_storage ss = remote.sockaddr(len);
    if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS)
        return sys_error("connect " + remote.text());
    return {};
}

Endpoint local_endpoint(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    return Endpoint::from(ss);
}

Endpoint peer_endpoint(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    return Endpoint::from(ss);
}

void close_with_reset(int fd) {
    linger l{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd);
}

void close_silently(int fd) {
    int on = 1;
    // In repair mode close() tears the socket down without a FIN or RST.
    if (setsockopt(fd, SOL_TCP, TCP_REPAIR, &on, sizeof(on)) != 0) {
        close_with_reset(fd);
        return;
    }
    close(fd);
}

ssize_t receive_datagram(int fd, char* buf, size_t len, Endpoint& from, Endpoint& original_destination) {
    sockaddr_storage src{};
    alignas(cmsghdr) char control[256];
    iovec iov{buf, len};
    msghdr msg{};
    msg.msg_name = &src;
    msg.msg_namelen = sizeof(src);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
    if (n < 0) return -1;
    from = Endpoint::from(src);
    original_destination = Endpoint{};
    original_destination.family = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_ORIGDSTADDR) ||
            (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_ORIGDSTADDR)) {
            sockaddr_storage ss{};
            std::memcpy(&ss, CMSG_DATA(c), std::min<size_t>(c->cmsg_len - CMSG_LEN(0), sizeof(ss)));
            original_destination = Endpoint::from(ss);
        }
    }
    return n;
}

}  // namespace sluice::inspect
