#include "egress/reply_sockets.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace sluice::egress {
namespace {

// More destinations than this (a client scanning resolver addresses) and the
// cache starts over rather than hold a socket per address forever.
constexpr size_t kMaxReplySockets = 256;

}  // namespace

Status ReplySockets::send(const inspect::Endpoint& from, const inspect::Endpoint& to,
                          std::span<const uint8_t> message) {
    Key key{from.family, {from.addr[0], from.addr[1], from.addr[2], from.addr[3]}, from.port};
    auto it = sockets_.find(key);
    if (it == sockets_.end()) {
        if (sockets_.size() >= kMaxReplySockets) close_all();
        auto fd = inspect::open_transparent(SOCK_DGRAM, from);
        if (!fd) return with_context("DNS proxy: cannot answer as " + from.text(), fd.error());
        // The socket only sends: a tiny receive buffer keeps stray datagrams
        // for that address from piling up in it.
        int small = 1;
        setsockopt(fd.value(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        it = sockets_.emplace(key, fd.value()).first;
    }
    socklen_t len = 0;
    sockaddr_storage ss = to.sockaddr(len);
    if (sendto(it->second, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
               reinterpret_cast<sockaddr*>(&ss), len) < 0)
        return errno_error("DNS proxy: answer " + to.text() + " from " + from.text(), errno);
    return {};
}

void ReplySockets::close_all() {
    for (auto& [key, fd] : sockets_) close(fd);
    sockets_.clear();
}

}  // namespace sluice::egress
