// The DNS proxy's event loop: one thread, epoll, everything non-blocking.
// Queries arrive on the UDP listeners and on TCP connections, are decided,
// forwarded (each an UpstreamExchange with its own socket and deadline, so
// any number are in flight and a dead upstream delays only the queries it
// holds), and answered once the answer's addresses are learned.
#include "egress/dns_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "egress/answer_policy.h"
#include "egress/dns_message.h"
#include "egress/proxy_listeners.h"
#include "egress/reply_sockets.h"
#include "egress/tcp_framing.h"
#include "egress/upstream_client.h"
#include "inspect/sockets.h"

namespace sluice::egress {
namespace {

using inspect::Endpoint;

// Bounds that keep a flood from exhausting the proxy: queries waiting for an
// upstream (more are answered SERVFAIL at once), TCP connections (more are
// closed at once), queries in flight per connection (more wait in the
// socket), and datagrams read per wake-up (so TCP and answers get their turn).
constexpr size_t kMaxPending = 4096;
constexpr size_t kMaxTcpClients = 512;
constexpr size_t kMaxInFlightPerConnection = 64;
constexpr int kDatagramsPerWake = 64;
constexpr int kAcceptsPerWake = 64;
// RFC 7766 6.2.3: servers close idle connections after some seconds.
constexpr std::chrono::seconds kTcpIdle{10};
constexpr size_t kMaxUdpQuery = 65535;

// epoll tokens: the kind in the low bits, a never-reused id above them.
enum TokenKind : uint64_t { kWake = 0, kListener = 1, kUpstream = 2, kTcpClient = 3 };
uint64_t token(uint64_t id, TokenKind kind) { return (id << 2) | kind; }

struct Counters {
    std::atomic<uint64_t> queries{0}, tcp_queries{0}, allowed{0}, denied{0}, not_governed{0}, malformed{0},
        upstream_errors{0}, servfail{0}, learned{0}, learn_failures{0};
};

void bump(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

void copy_endpoint(const Endpoint& e, std::array<uint8_t, 16>& addr, uint16_t& port) {
    std::memcpy(addr.data(), e.addr, 16);
    port = ntohs(e.port);
}

// Where a query came from and where its answer goes.
struct Origin {
    bool tcp = false;
    uint64_t connection = 0;        // TCP: the connection's id
    int listener = -1;              // UDP: the listener it arrived on
    Endpoint client;
    Endpoint resolver;              // the original destination (the listener's own address when there is none)
    bool from_resolver = false;     // UDP, transparent: answer from `resolver`, not the listener
};

struct TcpClient {
    uint64_t id = 0;
    int fd = -1;
    Endpoint client, resolver;
    FrameReader in;
    std::vector<uint8_t> out;
    size_t out_sent = 0;
    size_t in_flight = 0;
    bool read_closed = false;
    Clock::time_point idle_deadline{};
};

struct Pending {
    uint64_t id = 0;
    Origin origin;
    std::shared_ptr<const config::Egress> policy;  // the snapshot the query is decided under
    const config::EgressScope* scope = nullptr;
    uint8_t scope_id = 0;
    Query query;
    std::unique_ptr<UpstreamExchange> exchange;    // refers to `query`: declared after it, destroyed first
    size_t failures_counted = 0;
    Clock::time_point deadline{};
};

class Proxy final : public DnsProxy {
public:
    Proxy(std::shared_ptr<const config::Egress> policy, DnsProxyOptions options, DnsProxyHooks hooks,
          ProxyListeners listeners)
        : options_(options), hooks_(std::move(hooks)), policy_(std::move(policy)), listeners_(listeners) {}
    ~Proxy() override { stop(); }

    Status open_loop();

    void set_policy(std::shared_ptr<const config::Egress> policy) override {
        std::lock_guard lock(policy_mutex_);
        policy_ = std::move(policy);
    }
    uint16_t port() const override { return listeners_.port; }
    DnsProxyCounters counters() const override;
    void stop() override;

private:
    std::shared_ptr<const config::Egress> policy() const {
        std::lock_guard lock(policy_mutex_);
        return policy_;
    }

    void run();
    void on_event(uint64_t tok, uint32_t events);
    void on_deadlines(Clock::time_point now);
    Clock::time_point next_deadline() const { return deadlines_.empty() ? Clock::time_point::max() : deadlines_.begin()->first; }
    void set_deadline(uint64_t tok, Clock::time_point& slot, Clock::time_point when);
    void clear_deadline(uint64_t tok, Clock::time_point& slot);

    void read_datagrams(int listener);
    void accept_connections(int listener);
    void on_tcp_client(uint64_t id, uint32_t events);
    void drain_tcp(uint64_t id);
    bool finished(const TcpClient& c) const;
    void flush_tcp(TcpClient& c);
    void update_tcp(TcpClient& c);
    void close_tcp(uint64_t id);

    void on_message(std::span<const uint8_t> wire, const Origin& origin);
    void advance(Pending& p, UpstreamExchange::State state);
    void finish(Pending& p);
    void answer(const Origin& origin, std::span<const uint8_t> wire);
    void answer_rcode(const Origin& origin, const Query& query, ldns_pkt_rcode rcode);
    void drop_pending(uint64_t id);
    void watch(int fd, uint64_t tok, uint32_t events);

    DnsProxyOptions options_;
    DnsProxyHooks hooks_;
    mutable std::mutex policy_mutex_;
    std::shared_ptr<const config::Egress> policy_;
    ProxyListeners listeners_;
    Endpoint udp4_local_, udp6_local_;  // the UDP listeners' own addresses
    int epoll_fd_ = -1;
    int wake_fd_ = -1;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    std::once_flag stopped_;
    Counters counters_;
    UpstreamRotation rotation_;

    // The loop thread's own.
    ReplySockets reply_sockets_;
    std::vector<char> datagram_ = std::vector<char>(kMaxUdpQuery);  // the receive buffer, allocated once
    uint64_t next_id_ = 1;
    std::unordered_map<uint64_t, std::unique_ptr<Pending>> pending_;
    std::unordered_map<uint64_t, std::unique_ptr<TcpClient>> tcp_clients_;
    std::set<std::pair<Clock::time_point, uint64_t>> deadlines_;
    std::vector<uint64_t> to_drain_;  // TCP connections with queries left in their buffers
};

Status Proxy::open_loop() {
    udp4_local_ = inspect::local_endpoint(listeners_.udp4);
    udp6_local_ = inspect::local_endpoint(listeners_.udp6);
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) return errno_error("DNS proxy: epoll_create1", errno);
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) return errno_error("DNS proxy: eventfd", errno);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = token(0, kWake);
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) return errno_error("DNS proxy: epoll_ctl", errno);
    for (int fd : {listeners_.udp4, listeners_.udp6, listeners_.tcp4, listeners_.tcp6}) {
        ev.data.u64 = token(static_cast<uint64_t>(fd), kListener);
        if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return errno_error("DNS proxy: epoll_ctl", errno);
    }
    thread_ = std::thread([this] { run(); });
    return {};
}

void Proxy::stop() {
    std::call_once(stopped_, [this] {
        stopping_.store(true);
        if (wake_fd_ >= 0) {
            uint64_t one = 1;
            [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
        }
        if (thread_.joinable()) thread_.join();
        pending_.clear();  // closes the upstream sockets
        for (auto& [id, c] : tcp_clients_) close(c->fd);
        tcp_clients_.clear();
        reply_sockets_.close_all();
        listeners_.close_all();
        if (wake_fd_ >= 0) close(wake_fd_);
        if (epoll_fd_ >= 0) close(epoll_fd_);
        wake_fd_ = epoll_fd_ = -1;
    });
}

DnsProxyCounters Proxy::counters() const {
    auto get = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
    DnsProxyCounters c;
    c.queries = get(counters_.queries);
    c.tcp_queries = get(counters_.tcp_queries);
    c.allowed = get(counters_.allowed);
    c.denied = get(counters_.denied);
    c.not_governed = get(counters_.not_governed);
    c.malformed = get(counters_.malformed);
    c.upstream_errors = get(counters_.upstream_errors);
    c.servfail = get(counters_.servfail);
    c.learned = get(counters_.learned);
    c.learn_failures = get(counters_.learn_failures);
    return c;
}

void Proxy::run() {
    epoll_event events[64];
    while (!stopping_.load()) {
        int wait_ms = -1;
        if (!to_drain_.empty()) {
            wait_ms = 0;
        } else if (!deadlines_.empty()) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(next_deadline() - Clock::now());
            wait_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60'000));
        }
        int n = epoll_wait(epoll_fd_, events, 64, wait_ms);
        if (n < 0 && errno != EINTR) break;  // EBADF/EINVAL: nothing left to serve
        for (int i = 0; i < n && !stopping_.load(); ++i) on_event(events[i].data.u64, events[i].events);
        on_deadlines(Clock::now());
        std::vector<uint64_t> drain;
        drain.swap(to_drain_);
        for (uint64_t id : drain) drain_tcp(id);
    }
}

void Proxy::on_event(uint64_t tok, uint32_t events) {
    const uint64_t id = tok >> 2;
    switch (static_cast<TokenKind>(tok & 3)) {
    case kWake:
        return;
    case kListener: {
        const int fd = static_cast<int>(id);
        if (fd == listeners_.udp4 || fd == listeners_.udp6) read_datagrams(fd);
        else accept_connections(fd);
        return;
    }
    case kUpstream: {
        auto it = pending_.find(id);
        if (it == pending_.end()) return;  // answered already; a stale event of its closed socket
        Pending& p = *it->second;
        advance(p, p.exchange->on_ready(events, Clock::now()));
        return;
    }
    case kTcpClient:
        on_tcp_client(id, events);
        return;
    }
}

void Proxy::set_deadline(uint64_t tok, Clock::time_point& slot, Clock::time_point when) {
    if (slot == when) return;
    deadlines_.erase({slot, tok});
    slot = when;
    deadlines_.insert({when, tok});
}

void Proxy::clear_deadline(uint64_t tok, Clock::time_point& slot) {
    deadlines_.erase({slot, tok});
    slot = {};
}

void Proxy::on_deadlines(Clock::time_point now) {
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
        const uint64_t tok = deadlines_.begin()->second;
        deadlines_.erase(deadlines_.begin());
        const uint64_t id = tok >> 2;
        if ((tok & 3) == kUpstream) {
            auto it = pending_.find(id);
            if (it == pending_.end()) continue;
            Pending& p = *it->second;
            p.deadline = {};
            advance(p, p.exchange->on_deadline(now));
        } else if ((tok & 3) == kTcpClient) {
            auto it = tcp_clients_.find(id);
            if (it == tcp_clients_.end()) continue;
            TcpClient& c = *it->second;
            c.idle_deadline = {};
            // Busy (a query upstream, an answer still going out): not idle.
            if (c.in_flight > 0 || c.out_sent < c.out.size()) set_deadline(tok, c.idle_deadline, now + kTcpIdle);
            else close_tcp(id);
        }
    }
}

void Proxy::watch(int fd, uint64_t tok, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tok;
    // MOD first: the same socket waiting for something else. ENOENT: a new
    // socket (possibly under a number a closed one had, whose registration
    // went with it).
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
        epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
}

// ---- UDP ----

void Proxy::read_datagrams(int listener) {
    std::vector<char>& buf = datagram_;
    const bool v4 = listener == listeners_.udp4;
    for (int i = 0; i < kDatagramsPerWake; ++i) {
        Origin origin;
        Endpoint destination;
        ssize_t n = inspect::receive_datagram(listener, buf.data(), buf.size(), origin.client, destination);
        if (n < 0) return;  // EAGAIN: all read
        origin.listener = listener;
        origin.resolver = v4 ? udp4_local_ : udp6_local_;
        if (options_.transparent && destination.family != 0 &&
            (destination.port != origin.resolver.port ||
             std::memcmp(destination.addr, origin.resolver.addr, v4 ? 4 : 16) != 0)) {
            origin.resolver = destination;
            origin.from_resolver = true;
        }
        on_message({reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(n)}, origin);
    }
}

// ---- TCP ----

void Proxy::accept_connections(int listener) {
    for (int i = 0; i < kAcceptsPerWake; ++i) {
        int fd = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        if (tcp_clients_.size() >= kMaxTcpClients) {
            close(fd);
            continue;
        }
        auto c = std::make_unique<TcpClient>();
        c->id = next_id_++;
        c->fd = fd;
        c->client = inspect::peer_endpoint(fd);
        c->resolver = inspect::local_endpoint(fd);  // transparent: the resolver the client connected to
        TcpClient& ref = *c;
        tcp_clients_.emplace(c->id, std::move(c));
        watch(fd, token(ref.id, kTcpClient), EPOLLIN);
        set_deadline(token(ref.id, kTcpClient), ref.idle_deadline, Clock::now() + kTcpIdle);
    }
}

void Proxy::on_tcp_client(uint64_t id, uint32_t events) {
    auto it = tcp_clients_.find(id);
    if (it == tcp_clients_.end()) return;
    TcpClient& c = *it->second;
    // Reset, or shut down both ways: no answer can reach the client any more.
    if (events & (EPOLLERR | EPOLLHUP)) return close_tcp(id);
    if (events & EPOLLOUT) flush_tcp(c);
    if (!tcp_clients_.count(id)) return;
    if ((events & EPOLLIN) && !c.read_closed) {
        uint8_t buf[4096];
        ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return close_tcp(id);
        if (n == 0) c.read_closed = true;  // the client may half-close after its query: still answer it
        if (n > 0) {
            c.in.append(buf, static_cast<size_t>(n));
            set_deadline(token(id, kTcpClient), c.idle_deadline, Clock::now() + kTcpIdle);
        }
    }
    drain_tcp(id);
}

// Takes the connection's complete queries, up to kMaxInFlightPerConnection at
// a time; the rest wait in its buffer until answers make room (answer()
// queues the connection for another turn).
void Proxy::drain_tcp(uint64_t id) {
    auto it = tcp_clients_.find(id);
    if (it == tcp_clients_.end()) return;
    TcpClient& c = *it->second;
    Origin origin;
    origin.tcp = true;
    origin.connection = id;
    origin.client = c.client;
    origin.resolver = c.resolver;
    while (c.in_flight < kMaxInFlightPerConnection) {
        auto message = c.in.next();
        if (!message) break;
        ++c.in_flight;  // answer() takes it back (also for the immediate answers)
        on_message(*message, origin);
        if (!tcp_clients_.count(id)) return;
    }
    if (finished(c)) return close_tcp(id);
    update_tcp(c);
}

// The client sent its last byte and has every answer: nothing more to do.
bool Proxy::finished(const TcpClient& c) const {
    return c.read_closed && c.in_flight == 0 && c.out_sent == c.out.size() && !c.in.ready();
}

void Proxy::flush_tcp(TcpClient& c) {
    while (c.out_sent < c.out.size()) {
        ssize_t n = send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            if (errno == EINTR) continue;
            return close_tcp(c.id);
        }
        c.out_sent += static_cast<size_t>(n);
    }
    c.out.clear();
    c.out_sent = 0;
}

void Proxy::update_tcp(TcpClient& c) {
    uint32_t events = 0;
    if (!c.read_closed && c.in_flight < kMaxInFlightPerConnection) events |= EPOLLIN;
    if (c.out_sent < c.out.size()) events |= EPOLLOUT;
    watch(c.fd, token(c.id, kTcpClient), events);
}

void Proxy::close_tcp(uint64_t id) {
    auto it = tcp_clients_.find(id);
    if (it == tcp_clients_.end()) return;
    clear_deadline(token(id, kTcpClient), it->second->idle_deadline);
    close(it->second->fd);
    tcp_clients_.erase(it);  // its queries still upstream find no connection and are dropped
}

// ---- queries ----

void Proxy::on_message(std::span<const uint8_t> wire, const Origin& origin) {
    auto parsed = parse_query(wire);
    if (auto* rejected = std::get_if<QueryRejection>(&parsed)) {
        bump(counters_.malformed);
        if (rejected->answerable) {
            if (auto formerr = build_formerr(wire)) return answer(origin, formerr.value());
        }
        return answer(origin, {});  // nothing to send; a TCP query still leaves the count
    }
    Query& query = std::get<Query>(parsed);
    bump(counters_.queries);
    if (origin.tcp) bump(counters_.tcp_queries);

    ClientFlow flow;
    flow.family = origin.client.family;
    flow.protocol = origin.tcp ? IPPROTO_TCP : IPPROTO_UDP;
    copy_endpoint(origin.client, flow.client, flow.client_port);
    copy_endpoint(origin.resolver, flow.resolver, flow.resolver_port);
    const uint8_t scope_id = hooks_.scope_of ? hooks_.scope_of(flow) : 0;
    std::shared_ptr<const config::Egress> snapshot = policy();
    const config::EgressScope* scope = nullptr;
    if (snapshot && scope_id != 0)
        for (const config::EgressScope& s : snapshot->scopes)
            if (s.id == scope_id) scope = &s;
    if (!scope) {
        // No scope governs the client (or the one it had is gone with a
        // reload): the proxy resolves only for governed sources.
        bump(counters_.not_governed);
        return answer_rcode(origin, query, LDNS_RCODE_REFUSED);
    }
    if (!decide_query_name(*snapshot, *scope, query.normalized_name).allowed) {
        bump(counters_.denied);
        return answer_rcode(origin, query, deny_rcode(*snapshot));
    }
    if (pending_.size() >= kMaxPending) {
        bump(counters_.servfail);
        return answer_rcode(origin, query, LDNS_RCODE_SERVFAIL);
    }

    auto p = std::make_unique<Pending>();
    p->id = next_id_++;
    p->origin = origin;
    p->scope = scope;
    p->scope_id = scope_id;
    p->query = std::move(query);
    std::vector<Endpoint> upstreams;
    for (const config::EgressUpstream& u : snapshot->upstreams) upstreams.push_back(upstream_endpoint(u));
    p->policy = std::move(snapshot);
    p->exchange = std::make_unique<UpstreamExchange>(std::move(upstreams), rotation_, p->query, origin.tcp,
                                                     options_.upstream_timeout);
    Pending& ref = *p;
    pending_.emplace(p->id, std::move(p));
    advance(ref, ref.exchange->start(Clock::now()));
}

void Proxy::advance(Pending& p, UpstreamExchange::State state) {
    const size_t failures = p.exchange->failed_attempts();
    bump(counters_.upstream_errors, failures - p.failures_counted);
    p.failures_counted = failures;
    const uint64_t tok = token(p.id, kUpstream);
    switch (state) {
    case UpstreamExchange::State::waiting:
        watch(p.exchange->fd(), tok, p.exchange->events());
        set_deadline(tok, p.deadline, p.exchange->deadline());
        return;
    case UpstreamExchange::State::failed:
        bump(counters_.servfail);
        answer_rcode(p.origin, p.query, LDNS_RCODE_SERVFAIL);
        return drop_pending(p.id);
    case UpstreamExchange::State::answered:
        finish(p);
        return drop_pending(p.id);
    }
}

void Proxy::finish(Pending& p) {
    AnswerDecision d =
        decide_answer(*p.policy, *p.scope, p.query, p.exchange->take_response(), p.exchange->sent_id());
    if (d.kind == AnswerDecision::Kind::deny) {
        bump(counters_.denied);
        return answer_rcode(p.origin, p.query, deny_rcode(*p.policy));
    }
    if (d.kind == AnswerDecision::Kind::servfail) {
        bump(counters_.servfail);
        return answer_rcode(p.origin, p.query, LDNS_RCODE_SERVFAIL);
    }
    // The datapath must know the addresses before the client can use them:
    // learn first, answer after.
    if (!d.addresses.empty()) {
        Status learned = hooks_.learn ? hooks_.learn(p.scope_id, d.addresses)
                                      : Status(make_error("the DNS proxy has no learn hook"));
        if (!learned) {
            bump(counters_.learn_failures);
            bump(counters_.servfail);
            return answer_rcode(p.origin, p.query, LDNS_RCODE_SERVFAIL);
        }
        bump(counters_.learned, d.addresses.size());
    }
    auto wire = to_wire(d.answer.get());
    if (!wire) {
        bump(counters_.servfail);
        return answer_rcode(p.origin, p.query, LDNS_RCODE_SERVFAIL);
    }
    bump(counters_.allowed);
    if (!p.origin.tcp && wire->size() > p.query.max_udp_answer) {
        // Larger than the client takes over UDP: TC, and it asks again over TCP.
        if (auto truncated = build_truncated(p.query, d.answer.get())) return answer(p.origin, *truncated);
    }
    answer(p.origin, wire.value());
}

void Proxy::drop_pending(uint64_t id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    clear_deadline(token(id, kUpstream), it->second->deadline);
    pending_.erase(it);  // the exchange closes its socket; epoll forgets it
}

void Proxy::answer_rcode(const Origin& origin, const Query& query, ldns_pkt_rcode rcode) {
    auto wire = build_reply(query, rcode);
    answer(origin, wire ? std::span<const uint8_t>(wire.value()) : std::span<const uint8_t>{});
}

// Sends `wire` (nothing when empty) to the query's client. A failed send is
// the client's loss: UDP has no one to tell, and the daemon's log would only
// fill with one line per lost datagram.
void Proxy::answer(const Origin& origin, std::span<const uint8_t> wire) {
    if (origin.tcp) {
        auto it = tcp_clients_.find(origin.connection);
        if (it == tcp_clients_.end()) return;
        TcpClient& c = *it->second;
        if (c.in_flight > 0) --c.in_flight;
        if (!wire.empty()) {
            auto framed = frame_message(std::vector<uint8_t>(wire.begin(), wire.end()));
            c.out.insert(c.out.end(), framed.begin(), framed.end());
            flush_tcp(c);
            if (!tcp_clients_.count(origin.connection)) return;
        }
        if (finished(c)) return close_tcp(c.id);
        if (c.in.ready() && c.in_flight < kMaxInFlightPerConnection) to_drain_.push_back(c.id);
        update_tcp(c);
        return;
    }
    if (wire.empty()) return;
    if (origin.from_resolver) {
        (void)reply_sockets_.send(origin.resolver, origin.client, wire);
        return;
    }
    socklen_t len = 0;
    sockaddr_storage to = origin.client.sockaddr(len);
    (void)sendto(origin.listener, wire.data(), wire.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<sockaddr*>(&to), len);
}

}  // namespace

Result<std::unique_ptr<DnsProxy>> DnsProxy::start(std::shared_ptr<const config::Egress> policy,
                                                   DnsProxyOptions options, DnsProxyHooks hooks) {
    if (options.upstream_timeout <= std::chrono::milliseconds(0))
        return make_error(ErrorCode::InvalidConfig, "DNS proxy: the upstream timeout must be positive (it is " +
                                                        std::to_string(options.upstream_timeout.count()) + " ms)");
    auto listeners = open_proxy_listeners(options.port, options.transparent);
    if (!listeners) return listeners.error();
    auto proxy = std::make_unique<Proxy>(std::move(policy), options, std::move(hooks), listeners.value());
    if (auto s = proxy->open_loop(); !s) return s.error();  // the destructor closes what was opened
    return std::unique_ptr<DnsProxy>(std::move(proxy));
}

}  // namespace sluice::egress
