#include "daemon/control_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice::control {
namespace {

constexpr size_t kMaxRequest = 4096;

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

Result<sockaddr_un> unix_address(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) return make_error("control socket path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return addr;
}

// One line (without its newline) from a connected socket whose receive
// timeout is set; an Error on timeout, EOF before the newline or overflow.
Result<std::string> read_line(int fd) {
    std::string line;
    char buf[512];
    for (;;) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error("control socket: reading the request", errno);
        if (n == 0) return make_error("control socket: the client closed before sending a request");
        line.append(buf, static_cast<size_t>(n));
        if (auto nl = line.find('\n'); nl != std::string::npos) return line.substr(0, nl);
        if (line.size() > kMaxRequest) return make_error("control socket: request too long");
    }
}

Status write_all(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error("control socket: writing the reply", errno);
        done += static_cast<size_t>(n);
    }
    return {};
}

}  // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::open(const std::string& path) {
    auto addr = unix_address(path);
    if (!addr) return addr.error();
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return errno_error("control socket", errno);
    std::unique_ptr<ControlServer> server(new ControlServer(fd, path));
    ::unlink(path.c_str());
    // Only root talks to the daemon: the socket is created 0600.
    const mode_t old_mask = ::umask(0177);
    const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_un));
    const int bind_errno = errno;
    ::umask(old_mask);
    if (rc != 0) return errno_error("control socket: bind " + path, bind_errno);
    if (::listen(fd, 8) != 0) return errno_error("control socket: listen " + path, errno);
    return server;
}

ControlServer::~ControlServer() {
    ::close(fd_);
    ::unlink(path_.c_str());
}

Status ControlServer::serve_one(const std::function<Reply(const Request&)>& handler) {
    Fd client{::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)};
    if (client.fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {};
        return errno_error("control socket: accept", errno);
    }
    const timeval receive{1, 0}, send{5, 0};
    ::setsockopt(client.fd, SOL_SOCKET, SO_RCVTIMEO, &receive, sizeof receive);
    ::setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &send, sizeof send);
    auto line = read_line(client.fd);
    if (!line) return line.error();
    Reply reply;
    auto request = decode_request(*line);
    if (!request) {
        reply.message = request.error().message;
    } else if (request->version != kProtocolVersion) {
        reply.message = "control protocol version " + std::to_string(request->version) + " asked; this daemon speaks " +
                        std::to_string(kProtocolVersion) + " (is the sluice binary newer than the running daemon?)";
    } else {
        reply = handler(*request);
    }
    return write_all(client.fd, encode(reply));
}

}  // namespace sluice::control
