#include "cli/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice::cli {
namespace {

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

Result<control::Reply> call_daemon(const std::string& socket, const control::Request& request,
                                   std::chrono::milliseconds timeout) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket.size() >= sizeof addr.sun_path) return make_error("control socket path too long: " + socket);
    std::memcpy(addr.sun_path, socket.c_str(), socket.size() + 1);
    Fd fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (fd.fd < 0) return errno_error("control socket", errno);
    if (::connect(fd.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        // No socket, or a socket left by a daemon that died: nobody to ask.
        if (err == ENOENT || err == ECONNREFUSED)
            return make_error(ErrorCode::NotFound, "no daemon answers at " + socket);
        return errno_error("cannot reach the daemon at " + socket, err);
    }
    const std::string text = control::encode(request);
    if (::send(fd.fd, text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size()))
        return errno_error("control socket: sending the request", errno);

    std::string reply;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return make_error(ErrorCode::Timeout, "the daemon did not answer within " +
                                                      std::to_string(timeout.count() / 1000) + " s");
        pollfd p{fd.fd, POLLIN, 0};
        const int n = ::poll(&p, 1, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error("control socket: poll", errno);
        if (n == 0) continue;
        char buf[4096];
        const ssize_t got = ::recv(fd.fd, buf, sizeof buf, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return errno_error("control socket: reading the reply", errno);
        if (got == 0) break;
        reply.append(buf, static_cast<size_t>(got));
        if (reply.find('\n') != std::string::npos) break;
    }
    const auto nl = reply.find('\n');
    if (nl == std::string::npos) return make_error("the daemon closed the control socket without a reply");
    return control::decode_reply(std::string_view(reply).substr(0, nl));
}

}  // namespace sluice::cli
