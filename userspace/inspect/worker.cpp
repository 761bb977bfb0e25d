#include "inspect/worker.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "inspect/sockets.h"

namespace sluice::inspect {
namespace {

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A read of up to this much is scanned and forwarded as one chunk.
constexpr size_t kBufferSize = 256 * 1024;

}  // namespace

Worker::Worker(StageContext& context) : context_(context), buffer_(kBufferSize) {}

Worker::~Worker() {
    relays_.clear();
    udp_.reset();
    for (auto& l : listeners_)
        if (l.fd >= 0) close(l.fd);
    if (stop_fd_ >= 0) close(stop_fd_);
    if (epoll_fd_ >= 0) close(epoll_fd_);
}

Result<std::unique_ptr<Worker>> Worker::open(StageContext& context, StagePorts ports) {
    std::unique_ptr<Worker> w(new Worker(context));
    w->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    w->stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->epoll_fd_ < 0 || w->stop_fd_ < 0)
        return make_error(std::string("inspection worker: epoll/eventfd: ") + std::strerror(errno));
    struct Spec {
        int family, type;
    } specs[4] = {{AF_INET, SOCK_STREAM}, {AF_INET6, SOCK_STREAM}, {AF_INET, SOCK_DGRAM}, {AF_INET6, SOCK_DGRAM}};
    for (int i = 0; i < 4; ++i) {
        uint16_t& port = specs[i].type == SOCK_STREAM ? ports.tcp : ports.udp;
        auto fd = open_stage_listener(specs[i].family, specs[i].type, port);
        if (!fd) return fd.error();
        w->listeners_[i].worker = w.get();
        w->listeners_[i].fd = fd.value();
        w->listeners_[i].tcp = specs[i].type == SOCK_STREAM;
        if (port == 0) {
            auto bound = bound_port(fd.value());
            if (!bound) return bound.error();
            port = bound.value();
        }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = static_cast<EventTarget*>(&w->listeners_[i]);
        if (epoll_ctl(w->epoll_fd_, EPOLL_CTL_ADD, fd.value(), &ev) != 0)
            return make_error(std::string("inspection worker: epoll_ctl: ") + std::strerror(errno));
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;  // the stop eventfd
    epoll_ctl(w->epoll_fd_, EPOLL_CTL_ADD, w->stop_fd_, &ev);
    w->ports_ = ports;
    w->udp_ = std::make_unique<UdpRelay>(w->epoll_fd_, w->scratch_, context, w->buffer_);
    return w;
}

void Worker::Listener::on_event(uint32_t) {
    if (tcp) worker->accept_all(fd);
    else worker->udp_->on_listener(fd);
}

void Worker::accept_all(int listener_fd) {
    for (;;) {
        int fd = accept4(listener_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;  // EAGAIN, or an aborted handshake
        TcpRelay::Services services{epoll_fd_, scratch_, context_, buffer_, [this](TcpRelay* r) { retire(r); }};
        if (auto relay = TcpRelay::start(fd, std::move(services))) {
            TcpRelay* raw = relay.get();
            relays_[raw] = std::move(relay);
        }
    }
}

void Worker::run() {
    epoll_event events[256];
    uint64_t last_sweep = monotonic_ns();
    for (;;) {
        int n = epoll_wait(epoll_fd_, events, 256, 1000);
        if (n < 0 && errno != EINTR) return;
        for (int i = 0; i < n; ++i) {
            if (!events[i].data.ptr) return;  // stop()
            static_cast<EventTarget*>(events[i].data.ptr)->on_event(events[i].events);
        }
        // Deleted only now: a later event of the same batch may name a retired relay.
        for (TcpRelay* r : retired_) relays_.erase(r);
        retired_.clear();
        uint64_t now = monotonic_ns();
        if (now - last_sweep >= 1'000'000'000ull) {
            udp_->sweep(now);
            last_sweep = now;
        }
    }
}

void Worker::stop() {
    uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof(one));
}

}  // namespace sluice::inspect
