#include "egress/upstream_client.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sluice::egress {
namespace {

constexpr size_t kMaxUdpMessage = 65535;

std::string errno_text(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

}  // namespace

inspect::Endpoint upstream_endpoint(const config::EgressUpstream& upstream) {
    inspect::Endpoint e;
    e.family = upstream.address.family == config::Family::ipv4 ? AF_INET : AF_INET6;
    std::memcpy(e.addr, upstream.address.addr.data(), 16);
    e.port = htons(upstream.port);
    return e;
}

uint16_t random_query_id() {
    uint16_t id = 0;
    // getrandom does not fail for 2 bytes once the pool is initialized (it
    // always is by the time a daemon runs); the fallback only keeps ids moving.
    if (getrandom(&id, sizeof(id), 0) != static_cast<ssize_t>(sizeof(id))) {
        static std::atomic<uint16_t> fallback{static_cast<uint16_t>(::getpid())};
        id = static_cast<uint16_t>(fallback.fetch_add(40503) * 40503u);
    }
    return id;
}

UpstreamExchange::UpstreamExchange(std::vector<inspect::Endpoint> upstreams, UpstreamRotation& rotation,
                                   const Query& query, bool tcp, std::chrono::milliseconds timeout)
    : upstreams_(std::move(upstreams)), rotation_(rotation), query_(query), start_tcp_(tcp), timeout_(timeout) {}

UpstreamExchange::~UpstreamExchange() { close_attempt(); }

void UpstreamExchange::close_attempt() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    events_ = 0;
    out_.clear();
    out_sent_ = 0;
    in_ = FrameReader{};
    tcp_connected_ = false;
}

UpstreamExchange::State UpstreamExchange::start(Clock::time_point now) {
    if (upstreams_.empty()) {
        last_error_ = "no upstream resolver is configured";
        return state_ = State::failed;
    }
    overall_deadline_ = now + timeout_ * upstreams_.size();
    current_ = rotation_.first(upstreams_.size());
    tried_ = 1;
    return open_attempt(now, start_tcp_);
}

UpstreamExchange::State UpstreamExchange::open_attempt(Clock::time_point now, bool tcp) {
    close_attempt();
    tcp_ = tcp;
    deadline_ = std::min(now + timeout_, overall_deadline_);
    const inspect::Endpoint& to = upstreams_[current_];
    id_ = random_query_id();
    auto wire = build_upstream_query(query_, id_);
    if (!wire) return attempt_failed(now, wire.error().message);
    fd_ = socket(to.family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return attempt_failed(now, errno_text("socket", errno));
    // A connected socket: the kernel picks a random source port, drops
    // datagrams from anyone but the upstream, and reports its ICMP errors.
    if (auto s = inspect::connect_to(fd_, to); !s) return attempt_failed(now, s.error().message);
    if (tcp) {
        out_ = frame_message(wire.value());
        events_ = EPOLLOUT;  // writable once connected
        return state_ = State::waiting;
    }
    if (send(fd_, wire->data(), wire->size(), MSG_NOSIGNAL) < 0)
        return attempt_failed(now, errno_text(("send to " + to.text()).c_str(), errno));
    events_ = EPOLLIN;
    return state_ = State::waiting;
}

UpstreamExchange::State UpstreamExchange::attempt_failed(Clock::time_point now, std::string why) {
    ++failed_attempts_;
    last_error_ = upstreams_[current_].text() + ": " + why;
    close_attempt();
    if (tried_ >= upstreams_.size() || now >= overall_deadline_) return state_ = State::failed;
    current_ = (current_ + 1) % upstreams_.size();
    ++tried_;
    return open_attempt(now, start_tcp_);
}

UpstreamExchange::State UpstreamExchange::on_deadline(Clock::time_point now) {
    if (state_ != State::waiting || now < deadline_) return state_;
    return attempt_failed(now, std::string("no answer within ") + std::to_string(timeout_.count()) + " ms" +
                                   (tcp_ ? " over TCP" : ""));
}

UpstreamExchange::State UpstreamExchange::on_ready(uint32_t events, Clock::time_point now) {
    if (state_ != State::waiting || fd_ < 0) return state_;
    if (!tcp_) return read_udp(now);
    if (!tcp_connected_) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) return attempt_failed(now, errno_text("TCP connect", err));
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return state_;
        tcp_connected_ = true;
    }
    if (out_sent_ < out_.size()) return write_tcp(now);
    return read_tcp(now);
}

UpstreamExchange::State UpstreamExchange::read_udp(Clock::time_point now) {
    // One receive buffer per thread, not 64 KiB allocated and zeroed per datagram.
    thread_local std::vector<uint8_t> buf(kMaxUdpMessage);
    while (true) {
        ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return state_;
            if (errno == EINTR) continue;
            return attempt_failed(now, errno_text("receive", errno));  // ECONNREFUSED: nothing listens there
        }
        State s = accept_response(now, std::vector<uint8_t>(buf.begin(), buf.begin() + n), false);
        if (s != State::waiting || fd_ < 0 || tcp_) return s;
    }
}

UpstreamExchange::State UpstreamExchange::write_tcp(Clock::time_point now) {
    while (out_sent_ < out_.size()) {
        ssize_t n = send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return state_;
            if (errno == EINTR) continue;
            return attempt_failed(now, errno_text("TCP send", errno));
        }
        out_sent_ += static_cast<size_t>(n);
    }
    events_ = EPOLLIN;
    return state_;
}

UpstreamExchange::State UpstreamExchange::read_tcp(Clock::time_point now) {
    uint8_t buf[4096];
    while (true) {
        ssize_t n = recv(fd_, buf, sizeof(buf), 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return state_;
            if (errno == EINTR) continue;
            return attempt_failed(now, errno_text("TCP receive", errno));
        }
        if (n == 0) return attempt_failed(now, "closed the TCP connection before answering");
        in_.append(buf, static_cast<size_t>(n));
        while (auto message = in_.next()) {
            State s = accept_response(now, std::move(*message), true);
            if (s != State::waiting || fd_ < 0) return s;
        }
    }
}

UpstreamExchange::State UpstreamExchange::accept_response(Clock::time_point now, std::vector<uint8_t> wire,
                                                          bool over_tcp) {
    auto packet = parse_packet(wire);
    // Not an answer to this question under this id: a stray or forged
    // datagram, or a late answer to an earlier query on a reused port. Keep
    // waiting for the real one (the deadline still holds).
    if (!packet || !answers_question(packet->get(), id_, query_.question())) return state_;
    if (!over_tcp && ldns_pkt_tc(packet->get())) return open_attempt(now, true);
    response_ = std::move(packet.value());
    rotation_.answered(current_);
    close_attempt();
    return state_ = State::answered;
}

Result<UpstreamAnswer> exchange_blocking(const std::vector<config::EgressUpstream>& upstreams,
                                         UpstreamRotation& rotation, const Query& query, bool tcp,
                                         std::chrono::milliseconds timeout) {
    std::vector<inspect::Endpoint> endpoints;
    for (const auto& u : upstreams) endpoints.push_back(upstream_endpoint(u));
    UpstreamExchange exchange(std::move(endpoints), rotation, query, tcp, timeout);
    UpstreamExchange::State state = exchange.start(Clock::now());
    while (state == UpstreamExchange::State::waiting) {
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(exchange.deadline() - Clock::now());
        pollfd p{exchange.fd(), static_cast<short>(exchange.events() & EPOLLIN ? POLLIN : POLLOUT), 0};
        int n = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, wait.count())));
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
            uint32_t events = 0;
            if (p.revents & POLLIN) events |= EPOLLIN;
            if (p.revents & POLLOUT) events |= EPOLLOUT;
            if (p.revents & POLLERR) events |= EPOLLERR;
            if (p.revents & POLLHUP) events |= EPOLLHUP;
            state = exchange.on_ready(events, Clock::now());
        } else {
            state = exchange.on_deadline(Clock::now());
        }
    }
    if (state == UpstreamExchange::State::failed)
        return make_error(ErrorCode::Timeout, "no upstream resolver answered the query for " + query.name + " (" +
                                                  std::to_string(exchange.failed_attempts()) +
                                                  " attempts; the last: " + exchange.last_error() + ")");
    UpstreamAnswer answer;
    answer.id = exchange.sent_id();
    answer.failed_attempts = exchange.failed_attempts();
    answer.response = exchange.take_response();
    return answer;
}

}  // namespace sluice::egress
