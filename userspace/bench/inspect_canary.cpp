#include "bench/inspect_canary.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench/netns_thread.h"

namespace sluice::bench {
namespace {

std::string errno_text(const std::string& what, int err) {
    return what + ": " + std::strerror(err);
}

// The exchange itself, on the calling thread (already in the namespace).
Status exchange(const std::string& address, int port, const std::string& request, size_t expect_bytes,
                std::chrono::milliseconds timeout) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, address.c_str(), &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons(static_cast<uint16_t>(port));
        len = sizeof(*sin);
    } else if (inet_pton(AF_INET6, address.c_str(), &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(static_cast<uint16_t>(port));
        len = sizeof(*sin6);
    } else {
        return make_error("not an IP address: " + address);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return make_error(errno_text("socket", errno));
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    // SO_SNDTIMEO bounds connect() too.
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const std::string where = address + " port " + std::to_string(port);
    if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        int err = errno;
        close(fd);
        return make_error(errno_text("connect to " + where, err));
    }
    size_t sent = 0;
    while (sent < request.size()) {
        ssize_t w = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (w <= 0) {
            int err = errno;
            close(fd);
            return make_error(errno_text("send to " + where, err));
        }
        sent += static_cast<size_t>(w);
    }
    size_t got = 0;
    char buf[4096];
    while (got < expect_bytes) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r == 0) break;
        if (r < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            close(fd);
            return make_error(errno_text("receive from " + where + " after " + std::to_string(got) + " bytes", err));
        }
        got += static_cast<size_t>(r);
    }
    close(fd);
    if (got < expect_bytes)
        return make_error(where + " answered " + std::to_string(got) + " bytes, expected " +
                          std::to_string(expect_bytes));
    return {};
}

}  // namespace

std::string canary_request(const std::string& text) {
    std::string r = "GET /?q=" + text + " HTTP/1.1\r\nHost: wan-host\r\n";
    if (r.size() < 120) r.append(120 - r.size(), 'x');
    return r + "\r\n";
}

Status canary_exchange(const std::string& netns, const std::string& address, int port, const std::string& text,
                       size_t expect_bytes, std::chrono::milliseconds timeout) {
    return in_netns(netns, [&] { return exchange(address, port, canary_request(text), expect_bytes, timeout); });
}

}  // namespace sluice::bench
