#include "bench/scale_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <future>
#include <thread>
#include <vector>

#include "bench/netns_thread.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

Result<sockaddr_in> ipv4(const std::string& address, int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) return make_error("not an IPv4 address: " + address);
    return a;
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) close(fd_);
    }
    Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Fd(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

Result<Fd> bound_socket(int type, const std::string& address, int port) {
    Fd s(socket(AF_INET, type | SOCK_CLOEXEC, 0));
    if (s.get() < 0) return errno_error("socket", errno);
    auto a = ipv4(address, port);
    if (!a) return a.error();
    if (bind(s.get(), reinterpret_cast<const sockaddr*>(&*a), sizeof *a) != 0)
        return errno_error("bind " + address + ":" + std::to_string(port), errno);
    return s;
}

Status send_datagrams(const std::string& source, const std::string& dest, int port, int count, bool stop) {
    auto s = bound_socket(SOCK_DGRAM, source, 0);
    if (!s) return s.error();
    auto to = ipv4(dest, port);
    if (!to) return to.error();
    auto send = [&](const std::string& payload) -> Status {
        if (sendto(s->get(), payload.data(), payload.size(), 0, reinterpret_cast<const sockaddr*>(&*to), sizeof *to) <
            0)
            return errno_error("sendto " + dest + ":" + std::to_string(port) + " from " + source, errno);
        return {};
    };
    for (int i = 0; i < count; ++i) {
        if (auto r = send("sluice-scale-probe " + std::to_string(i)); !r) return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (stop) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (auto r = send("stop"); !r) return r;
    }
    return {};
}

}  // namespace

Result<ProbeCounts> run_udp_probe(const UdpProbe& p) {
    ProbeCounts counts;
    std::promise<Status> ready;
    auto ready_future = ready.get_future();
    Status listen_result;
    std::thread listener([&] {
        bool announced = false;
        auto fail = [&](Status s) {
            if (!announced) ready.set_value(s);
            listen_result = s;
        };
        if (auto s = enter_netns(p.wan_ns); !s) return fail(s);
        std::vector<std::pair<Fd, int>> socks;
        for (int port : {p.port, p.control_port}) {
            if (!socks.empty() && port == socks.front().second) continue;
            auto s = bound_socket(SOCK_DGRAM, "0.0.0.0", port);
            if (!s) return fail(s.error());
            socks.emplace_back(std::move(*s), port);
        }
        ready.set_value(Status{});
        announced = true;
        const auto end = Clock::now() + p.listen_for;
        bool stopped = false;
        while (!stopped && Clock::now() < end) {
            std::vector<pollfd> fds;
            for (const auto& [s, port] : socks) fds.push_back({s.get(), POLLIN, 0});
            int n = poll(fds.data(), fds.size(), 50);
            if (n < 0 && errno != EINTR) return fail(errno_error("poll", errno));
            for (size_t i = 0; i < fds.size(); ++i) {
                if (!(fds[i].revents & POLLIN)) continue;
                char buf[2048];
                sockaddr_in from{};
                socklen_t len = sizeof from;
                ssize_t got = recvfrom(fds[i].fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
                if (got < 0) continue;
                if (std::string(buf, static_cast<size_t>(got)) == "stop") {
                    stopped = true;
                    continue;
                }
                char text[INET_ADDRSTRLEN] = {};
                inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
                ++counts[std::string(text) + ":" + std::to_string(socks[i].second)];
            }
        }
    });
    if (ready_future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        listener.join();
        return make_error("the UDP probe's listener in " + p.wan_ns + " did not start");
    }
    if (auto s = ready_future.get(); !s) {
        listener.join();
        return with_context("the UDP probe's listener in " + p.wan_ns, s.error());
    }
    // The control first, the probe, then "stop" from the control's source.
    Status sent = in_netns(p.lan_ns, [&]() -> Status {
        if (auto s = send_datagrams(p.control_source, p.dest, p.control_port, 3, false); !s) return s;
        if (auto s = send_datagrams(p.source, p.dest, p.port, p.count, false); !s) return s;
        return send_datagrams(p.control_source, p.dest, p.control_port, 0, true);
    });
    listener.join();
    if (!sent) return with_context("the UDP probe from " + p.lan_ns, sent.error());
    if (!listen_result) return listen_result.error();
    return counts;
}

Result<std::string> run_tcp_probe(const std::string& lan_ns, const std::string& source, const std::string& dest,
                                  int port, std::chrono::milliseconds timeout) {
    std::string verdict;
    Status s = in_netns(lan_ns, [&]() -> Status {
        auto sock = bound_socket(SOCK_STREAM, source, 0);
        if (!sock) return sock.error();
        auto to = ipv4(dest, port);
        if (!to) return to.error();
        int flags = fcntl(sock->get(), F_GETFL, 0);
        fcntl(sock->get(), F_SETFL, flags | O_NONBLOCK);
        int rc = connect(sock->get(), reinterpret_cast<const sockaddr*>(&*to), sizeof *to);
        int err = rc == 0 ? 0 : errno;
        if (rc != 0 && err == EINPROGRESS) {
            pollfd pfd{sock->get(), POLLOUT, 0};
            int n = poll(&pfd, 1, static_cast<int>(timeout.count()));
            if (n < 0) return errno_error("poll", errno);
            if (n == 0) {
                verdict = "blocked";  // no answer within the timeout
                return {};
            }
            socklen_t len = sizeof err;
            getsockopt(sock->get(), SOL_SOCKET, SO_ERROR, &err, &len);
        }
        if (err == 0 || err == ECONNREFUSED)
            verdict = "passed";
        else if (err == ETIMEDOUT || err == EHOSTUNREACH)
            verdict = "blocked";
        else
            return errno_error("connect " + dest + ":" + std::to_string(port) + " from " + source, err);
        return {};
    });
    if (!s) return s.error();
    return verdict;
}

}  // namespace sluice::bench
