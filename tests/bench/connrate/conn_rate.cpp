// sluice_connrate: short-connection rate through the firewall, for
// `sluice bench inspect` (docs/inspect-bench.md, part (c)).
//
//   sluice_connrate server --address A [--address B] --ports 5301-5316 [--threads 2] [--response-bytes 200]
//   sluice_connrate client --address DST --ports 5301-5316 --source S [--source S2 ...]
//                          [--source-ports 1024-65535] [--duration 3] [--warmup 0.5] [--threads 2]
//                          [--concurrency 32] [--request-bytes 80] [--response-bytes 200]
//                          [--offset N] [--timeout-ms 2000]
//
// One connection: connect, send one request, read one response, close. The
// client closes first (after the whole response), so its TIME_WAIT stays on
// the client host; the server closes when it reads the client's FIN.
//
// Every thread of the client runs an epoll loop that keeps `concurrency`
// connections in flight. Client tuples are chosen explicitly, not by the
// kernel's ephemeral-port search: connection number i uses source address
// i mod S, server port (i / S) mod P and source port (i / (S*P)) mod N, so a
// tuple comes back only after S*P*N connections (the harness passes --offset
// so that consecutive runs continue where the last one stopped). That keeps
// the sessions of one run apart from those of the next in the firewall's
// session table and in every TIME_WAIT list on the way, and it keeps the
// client's cost per connection constant however many sockets wait in
// TIME_WAIT.
//
// Only connections that complete inside [warmup, warmup + duration) are
// counted. The client prints one JSON object: completed, per_second,
// attempts, failures by kind, latency percentiles (µs, connect to close) and
// next_offset.
//
// The server prints "listening" on stdout once every socket is bound, and
// runs until it is killed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "sluice_connrate: %s\n", message.c_str());
    std::exit(2);
}

struct Address {
    sockaddr_storage ss{};
    socklen_t len = 0;
    int family = 0;
};

Address parse_address(const std::string& text, uint16_t port) {
    Address a;
    auto* sin = reinterpret_cast<sockaddr_in*>(&a.ss);
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
    if (inet_pton(AF_INET, text.c_str(), &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons(port);
        a.len = sizeof(*sin);
        a.family = AF_INET;
    } else if (inet_pton(AF_INET6, text.c_str(), &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(port);
        a.len = sizeof(*sin6);
        a.family = AF_INET6;
    } else {
        die("not an IP address: " + text);
    }
    return a;
}

void set_port(Address& a, uint16_t port) {
    if (a.family == AF_INET)
        reinterpret_cast<sockaddr_in*>(&a.ss)->sin_port = htons(port);
    else
        reinterpret_cast<sockaddr_in6*>(&a.ss)->sin6_port = htons(port);
}

std::pair<uint16_t, uint16_t> parse_range(const std::string& text) {
    auto dash = text.find('-');
    unsigned long first = std::strtoul(text.c_str(), nullptr, 10);
    unsigned long last = dash == std::string::npos ? first : std::strtoul(text.c_str() + dash + 1, nullptr, 10);
    if (first == 0 || last > 65535 || last < first) die("bad port range: " + text);
    return {static_cast<uint16_t>(first), static_cast<uint16_t>(last)};
}

struct Options {
    std::string mode;
    std::vector<std::string> addresses;  // server: listen on; client: the one destination
    std::vector<std::string> sources;    // client: local addresses to bind
    std::pair<uint16_t, uint16_t> ports{0, 0};
    std::pair<uint16_t, uint16_t> source_ports{1024, 65535};
    double duration = 3.0;
    double warmup = 0.5;
    unsigned threads = 2;
    unsigned concurrency = 32;
    size_t request_bytes = 80;
    size_t response_bytes = 200;
    uint64_t offset = 0;
    int timeout_ms = 2000;
};

Options parse(int argc, char** argv) {
    if (argc < 2) die("usage: sluice_connrate server|client [options] (see the comment at the top of conn_rate.cpp)");
    Options o;
    o.mode = argv[1];
    if (o.mode != "server" && o.mode != "client") die("the first argument is server or client");
    for (int i = 2; i < argc; ++i) {
        std::string flag = argv[i];
        if (i + 1 >= argc) die("missing value after " + flag);
        std::string value = argv[++i];
        if (flag == "--address")
            o.addresses.push_back(value);
        else if (flag == "--source")
            o.sources.push_back(value);
        else if (flag == "--ports")
            o.ports = parse_range(value);
        else if (flag == "--source-ports")
            o.source_ports = parse_range(value);
        else if (flag == "--duration")
            o.duration = std::stod(value);
        else if (flag == "--warmup")
            o.warmup = std::stod(value);
        else if (flag == "--threads")
            o.threads = static_cast<unsigned>(std::stoul(value));
        else if (flag == "--concurrency")
            o.concurrency = static_cast<unsigned>(std::stoul(value));
        else if (flag == "--request-bytes")
            o.request_bytes = std::stoul(value);
        else if (flag == "--response-bytes")
            o.response_bytes = std::stoul(value);
        else if (flag == "--offset")
            o.offset = std::stoull(value);
        else if (flag == "--timeout-ms")
            o.timeout_ms = std::stoi(value);
        else
            die("unknown option " + flag);
    }
    if (o.addresses.empty() || o.ports.first == 0) die("--address and --ports are required");
    if (o.mode == "client" && (o.sources.empty() || o.addresses.size() != 1))
        die("the client needs one --address and at least one --source");
    if (o.threads == 0 || o.concurrency == 0) die("--threads and --concurrency must be positive");
    return o;
}

// A small HTTP-looking exchange: the inspection stage scans real-looking text.
std::string message(const char* head, size_t bytes) {
    std::string m = head;
    while (m.size() + 2 < bytes) m += static_cast<char>('a' + m.size() % 26);
    m += "\r\n";
    m.resize(std::max(bytes, size_t{1}));
    return m;
}

int make_socket(int family) {
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die(std::string("socket: ") + std::strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

// ------------------------------------------------------------------ server

struct ServerConn {
    size_t received = 0;
    bool answered = false;
};

void server_thread(const Options& o, const std::string& response, std::atomic<unsigned>& bound) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    std::vector<int> listeners;
    for (const auto& text : o.addresses) {
        for (unsigned port = o.ports.first; port <= o.ports.second; ++port) {
            Address a = parse_address(text, static_cast<uint16_t>(port));
            int fd = make_socket(a.family);
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
            if (a.family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
            if (bind(fd, reinterpret_cast<sockaddr*>(&a.ss), a.len) != 0)
                die("bind " + text + ":" + std::to_string(port) + ": " + std::strerror(errno));
            if (listen(fd, 4096) != 0) die(std::string("listen: ") + std::strerror(errno));
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.u64 = (uint64_t{1} << 32) | static_cast<uint32_t>(fd);
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
            listeners.push_back(fd);
        }
    }
    bound.fetch_add(1);
    std::unordered_map<int, ServerConn> conns;
    std::vector<char> buf(64 * 1024);
    epoll_event events[256];
    for (;;) {
        int n = epoll_wait(ep, events, 256, -1);
        for (int i = 0; i < n; ++i) {
            int fd = static_cast<int>(events[i].data.u64 & 0xffffffff);
            if (events[i].data.u64 >> 32) {
                for (;;) {
                    int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (c < 0) break;
                    epoll_event ev{};
                    ev.events = EPOLLIN;
                    ev.data.u64 = static_cast<uint32_t>(c);
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
                    conns[c] = ServerConn{};
                }
                continue;
            }
            ServerConn& sc = conns[fd];
            bool done = false;
            for (;;) {
                ssize_t r = recv(fd, buf.data(), buf.size(), 0);
                if (r > 0) {
                    sc.received += static_cast<size_t>(r);
                    continue;
                }
                if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) done = true;
                break;
            }
            if (!done && !sc.answered && sc.received >= o.request_bytes) {
                // Small enough for any socket buffer: one send, never partial here.
                if (send(fd, response.data(), response.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(response.size()))
                    done = true;
                sc.answered = true;
            }
            if (done) {
                close(fd);  // epoll forgets a closed fd by itself
                conns.erase(fd);
            }
        }
    }
}

int run_server(const Options& o) {
    const std::string response = message("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Bench: ", o.response_bytes);
    std::vector<std::thread> threads;
    // Every thread binds its own listeners (SO_REUSEPORT): the kernel spreads
    // connections across them.
    std::atomic<unsigned> bound{0};
    for (unsigned t = 0; t < o.threads; ++t) threads.emplace_back([&] { server_thread(o, response, bound); });
    while (bound.load() < o.threads) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::printf("listening\n");
    std::fflush(stdout);
    for (auto& t : threads) t.join();
    return 0;
}

// ------------------------------------------------------------------ client

enum class Failure { bind, connect, reset, timeout, short_response, count };
const char* failure_name(Failure f) {
    static const char* names[] = {"bind", "connect", "reset", "timeout", "short_response"};
    return names[static_cast<int>(f)];
}

struct ThreadResult {
    uint64_t completed = 0;
    uint64_t attempts = 0;
    uint64_t failures[static_cast<int>(Failure::count)] = {};
    std::vector<uint32_t> latency_us;  // completed in the window
};

struct Slot {
    int fd = -1;
    Clock::time_point started;
    size_t received = 0;
    bool connected = false;
};

struct TupleSpace {
    std::vector<Address> sources;
    Address destination;
    uint16_t port_first = 0, port_count = 0;
    uint16_t sport_first = 0, sport_count = 0;

    // Fills `src` and `dst` for connection number i.
    void tuple(uint64_t i, Address& src, Address& dst) const {
        const uint64_t s = sources.size();
        src = sources[i % s];
        dst = destination;
        set_port(dst, static_cast<uint16_t>(port_first + (i / s) % port_count));
        set_port(src, static_cast<uint16_t>(sport_first + (i / (s * port_count)) % sport_count));
    }
};

void client_thread(const Options& o, const TupleSpace& space, unsigned index, Clock::time_point t0,
                   const std::string& request, ThreadResult& result) {
    const auto window_start = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
    const auto window_end =
        window_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration));
    const auto timeout = std::chrono::milliseconds(o.timeout_ms);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    std::vector<Slot> slots(o.concurrency);
    uint64_t next = o.offset + index;  // this thread's connection numbers: index, index + threads, ...
    char buf[4096];

    auto finish = [&](size_t k, bool ok, Failure why) {
        Slot& s = slots[k];
        auto now = Clock::now();
        if (ok) {
            close(s.fd);
            if (now >= window_start && now < window_end) {
                ++result.completed;
                result.latency_us.push_back(static_cast<uint32_t>(
                    std::chrono::duration_cast<std::chrono::microseconds>(now - s.started).count()));
            }
        } else {
            linger l{1, 0};  // a failed connection is not left behind in TIME_WAIT
            setsockopt(s.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
            close(s.fd);
            if (now >= window_start && now < window_end) ++result.failures[static_cast<int>(why)];
        }
        s.fd = -1;
    };

    auto open_one = [&](size_t k) -> bool {
        for (int tries = 0; tries < 16; ++tries) {
            Address src, dst;
            space.tuple(next, src, dst);
            next += o.threads;
            ++result.attempts;
            int fd = make_socket(src.family);
            if (bind(fd, reinterpret_cast<sockaddr*>(&src.ss), src.len) != 0) {
                // The tuple's source port is held by a live socket (not TIME_WAIT): take the next.
                close(fd);
                ++result.failures[static_cast<int>(Failure::bind)];
                continue;
            }
            Slot& s = slots[k];
            s = Slot{fd, Clock::now(), 0, false};
            if (connect(fd, reinterpret_cast<sockaddr*>(&dst.ss), dst.len) != 0 && errno != EINPROGRESS) {
                finish(k, false, Failure::connect);
                continue;
            }
            epoll_event ev{};
            ev.events = EPOLLOUT;
            ev.data.u64 = k;
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
            return true;
        }
        return false;
    };

    for (size_t k = 0; k < slots.size(); ++k) open_one(k);
    std::vector<epoll_event> events(slots.size());
    auto last_sweep = Clock::now();
    for (;;) {
        auto now = Clock::now();
        if (now >= window_end) break;
        int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 20);
        for (int i = 0; i < n; ++i) {
            size_t k = events[i].data.u64;
            Slot& s = slots[k];
            if (s.fd < 0) continue;
            if (!s.connected) {
                int err = 0;
                socklen_t len = sizeof(err);
                getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err != 0 || (events[i].events & (EPOLLERR | EPOLLHUP))) {
                    finish(k, false, Failure::connect);
                    open_one(k);
                    continue;
                }
                s.connected = true;
                if (send(s.fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
                    finish(k, false, Failure::reset);
                    open_one(k);
                    continue;
                }
                epoll_event ev{};
                ev.events = EPOLLIN;
                ev.data.u64 = k;
                epoll_ctl(ep, EPOLL_CTL_MOD, s.fd, &ev);
                continue;
            }
            bool failed = false, eof = false;
            for (;;) {
                ssize_t r = recv(s.fd, buf, sizeof(buf), 0);
                if (r > 0) {
                    s.received += static_cast<size_t>(r);
                    continue;
                }
                if (r == 0)
                    eof = true;
                else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                    failed = true;
                break;
            }
            if (s.received >= o.response_bytes)
                finish(k, true, Failure::count);
            else if (failed)
                finish(k, false, Failure::reset);
            else if (eof)
                finish(k, false, Failure::short_response);
            else
                continue;
            open_one(k);
        }
        now = Clock::now();
        if (now - last_sweep >= std::chrono::milliseconds(50)) {
            last_sweep = now;
            for (size_t k = 0; k < slots.size(); ++k) {
                if (slots[k].fd >= 0 && now - slots[k].started >= timeout) {
                    finish(k, false, Failure::timeout);
                    open_one(k);
                }
            }
        }
    }
    // Whatever is still in flight is neither counted nor waited for.
    for (auto& s : slots) {
        if (s.fd < 0) continue;
        linger l{1, 0};
        setsockopt(s.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
        close(s.fd);
    }
    close(ep);
}

int run_client(const Options& o) {
    TupleSpace space;
    space.destination = parse_address(o.addresses[0], 0);
    for (const auto& s : o.sources) {
        space.sources.push_back(parse_address(s, 0));
        if (space.sources.back().family != space.destination.family) die("--source and --address families differ");
    }
    space.port_first = o.ports.first;
    space.port_count = static_cast<uint16_t>(o.ports.second - o.ports.first + 1);
    space.sport_first = o.source_ports.first;
    space.sport_count = static_cast<uint16_t>(o.source_ports.second - o.source_ports.first + 1);
    const std::string request = message("GET /bench HTTP/1.1\r\nHost: wan-host\r\nX-Bench: ", o.request_bytes);

    std::vector<ThreadResult> results(o.threads);
    std::vector<std::thread> threads;
    auto t0 = Clock::now();
    for (unsigned t = 0; t < o.threads; ++t)
        threads.emplace_back([&, t] { client_thread(o, space, t, t0, request, results[t]); });
    for (auto& t : threads) t.join();

    ThreadResult total;
    for (auto& r : results) {
        total.completed += r.completed;
        total.attempts += r.attempts;
        for (int f = 0; f < static_cast<int>(Failure::count); ++f) total.failures[f] += r.failures[f];
        total.latency_us.insert(total.latency_us.end(), r.latency_us.begin(), r.latency_us.end());
    }
    std::sort(total.latency_us.begin(), total.latency_us.end());
    auto pct = [&](double p) -> uint32_t {
        if (total.latency_us.empty()) return 0;
        size_t i = static_cast<size_t>(p * static_cast<double>(total.latency_us.size() - 1));
        return total.latency_us[i];
    };
    // Connection numbers used: every thread advanced by `threads` per attempt.
    uint64_t used = 0;
    for (auto& r : results) used = std::max(used, r.attempts);
    const uint64_t next_offset = o.offset + used * o.threads;
    std::printf("{\"completed\": %llu, \"seconds\": %.3f, \"per_second\": %.1f, \"attempts\": %llu, \"failures\": {",
                static_cast<unsigned long long>(total.completed), o.duration,
                static_cast<double>(total.completed) / o.duration, static_cast<unsigned long long>(total.attempts));
    for (int f = 0; f < static_cast<int>(Failure::count); ++f)
        std::printf("%s\"%s\": %llu", f ? ", " : "", failure_name(static_cast<Failure>(f)),
                    static_cast<unsigned long long>(total.failures[f]));
    std::printf("}, \"latency_us\": {\"p50\": %u, \"p90\": %u, \"p99\": %u}, \"next_offset\": %llu}\n", pct(0.5),
                pct(0.9), pct(0.99), static_cast<unsigned long long>(next_offset));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    return o.mode == "server" ? run_server(o) : run_client(o);
}
