#include "egress/proxy_listeners.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "inspect/sockets.h"

namespace sluice::egress {
namespace {

// How often a port picked for UDP on 127.0.0.1 may turn out taken for another
// of the four listeners before start gives up.
constexpr int kPortPicks = 16;

Result<int> open_plain(int family, int type, uint16_t port) {
    int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno_error("DNS proxy: socket", errno);
    int on = 1;
    // TCP: a restarted proxy rebinds despite TIME_WAIT. Not UDP, where it
    // would let another socket share the port and take queries.
    if (type == SOCK_STREAM) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (family == AF_INET6) setsockopt(fd, SOL_IPV6, IPV6_V6ONLY, &on, sizeof(on));
    const inspect::Endpoint local = inspect::loopback_endpoint(family, port);
    socklen_t len = 0;
    sockaddr_storage ss = local.sockaddr(len);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        Error e = errno_error("DNS proxy: bind " + local.text() + (type == SOCK_STREAM ? " (TCP)" : " (UDP)"), errno);
        close(fd);
        return e;
    }
    if (type == SOCK_STREAM && listen(fd, 1024) != 0) {
        Error e = errno_error("DNS proxy: listen on " + local.text(), errno);
        close(fd);
        return e;
    }
    return fd;
}

Result<int> open_one(int family, int type, uint16_t port, bool transparent) {
    if (!transparent) return open_plain(family, type, port);
    auto fd = inspect::open_stage_listener(family, type, port);
    if (!fd) return with_context("DNS proxy (transparent listeners need CAP_NET_ADMIN)", fd.error());
    return fd;
}

Result<ProxyListeners> open_once(uint16_t port, bool transparent) {
    ProxyListeners l;
    struct Slot {
        int* fd;
        int family;
        int type;
    };
    const Slot slots[] = {{&l.udp4, AF_INET, SOCK_DGRAM},
                          {&l.tcp4, AF_INET, SOCK_STREAM},
                          {&l.udp6, AF_INET6, SOCK_DGRAM},
                          {&l.tcp6, AF_INET6, SOCK_STREAM}};
    for (const Slot& s : slots) {
        auto fd = open_one(s.family, s.type, port, transparent);
        if (!fd) {
            l.close_all();
            return fd.error();
        }
        *s.fd = fd.value();
        if (port == 0) {
            auto bound = inspect::bound_port(*s.fd);
            if (!bound) {
                l.close_all();
                return bound.error();
            }
            port = bound.value();
        }
    }
    l.port = port;
    return l;
}

}  // namespace

void ProxyListeners::close_all() {
    for (int* fd : {&udp4, &udp6, &tcp4, &tcp6}) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
    }
}

Result<ProxyListeners> open_proxy_listeners(uint16_t port, bool transparent) {
    if (port != 0) return open_once(port, transparent);
    for (int pick = 1;; ++pick) {
        auto l = open_once(0, transparent);
        if (l || l.error().sys_errno != EADDRINUSE || pick == kPortPicks) return l;
    }
}

}  // namespace sluice::egress
