// Test doubles for the egress DNS proxy's upstreams, written with ldns: an
// authoritative responder on 127.0.0.1 (UDP and TCP, a random port) that
// answers from a small zone, follows its own CNAMEs like a recursive resolver
// would, can truncate chosen names over UDP and delay chosen answers; a
// blackhole (a bound UDP socket nobody reads: queries time out); and a closed
// port (queries get ICMP port unreachable). Also the client side: queries
// built with ldns, sent over UDP or TCP, answers parsed.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "config/load_config.h"
#include "egress/dns_message.h"
#include "egress/tcp_framing.h"

namespace egress_test {

using sluice::egress::Packet;
using sluice::egress::Wire;
using Clock = std::chrono::steady_clock;

inline ldns_rr* rr_from(const std::string& text) {
    ldns_rr* rr = nullptr;
    EXPECT_EQ(ldns_rr_new_frm_str(&rr, text.c_str(), 3600, nullptr, nullptr), LDNS_STATUS_OK) << text;
    return rr;
}

// A query for `name` (RD set) with `id`.
inline Packet make_query(const std::string& name, ldns_rr_type type = LDNS_RR_TYPE_A, uint16_t id = 0x1234) {
    const std::string absolute = name.ends_with(".") ? name : name + ".";
    Packet q(ldns_pkt_query_new(ldns_dname_new_frm_str(absolute.c_str()), type, LDNS_RR_CLASS_IN, LDNS_RD));
    ldns_pkt_set_id(q.get(), id);
    return q;
}

inline Wire wire_of(const ldns_pkt* p) {
    auto w = sluice::egress::to_wire(p);
    EXPECT_TRUE(w.ok());
    return w.ok() ? w.value() : Wire{};
}

inline Packet parse(const Wire& wire) {
    auto p = sluice::egress::parse_packet(wire);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    return p.ok() ? std::move(p.value()) : Packet{};
}

// The addresses of the answer's A/AAAA records, as text, in order.
inline std::vector<std::string> answer_addresses(const ldns_pkt* p) {
    std::vector<std::string> out;
    if (!p) return out;
    const ldns_rr_list* answer = ldns_pkt_answer(p);
    for (size_t i = 0; i < ldns_rr_list_rr_count(answer); ++i) {
        const ldns_rr* rr = ldns_rr_list_rr(answer, i);
        if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_A && ldns_rr_get_type(rr) != LDNS_RR_TYPE_AAAA) continue;
        char* text = ldns_rdf2str(ldns_rr_rdf(rr, 0));
        out.emplace_back(text);
        free(text);
    }
    return out;
}

inline sockaddr_storage loopback(int family, uint16_t port, socklen_t& len) {
    sockaddr_storage ss{};
    if (family == AF_INET) {
        auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
        sin->sin_family = AF_INET;
        sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sin->sin_port = htons(port);
        len = sizeof(*sin);
    } else {
        auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
        sin6->sin6_family = AF_INET6;
        sin6->sin6_addr = in6addr_loopback;
        sin6->sin6_port = htons(port);
        len = sizeof(*sin6);
    }
    return ss;
}

inline uint16_t port_of(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    return ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                         : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

// A socket bound to the loopback port, or -1 when the port is taken.
inline int try_bind(int family, int type, uint16_t port) {
    int fd = socket(family, type | SOCK_CLOEXEC, 0);
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    socklen_t len = 0;
    sockaddr_storage ss = loopback(family, port, len);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0) return fd;
    close(fd);
    return -1;
}

inline int bound_socket(int family, int type, uint16_t port = 0) {
    int fd = socket(family, type | SOCK_CLOEXEC, 0);
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    socklen_t len = 0;
    sockaddr_storage ss = loopback(family, port, len);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&ss), len), 0) << strerror(errno);
    return fd;
}

// Sends `query` over UDP to the loopback `port` and waits up to `timeout` for
// one datagram back. Empty: nothing came.
inline Wire ask_udp(uint16_t port, const Wire& query, std::chrono::milliseconds timeout = std::chrono::seconds(5),
                    int family = AF_INET) {
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    sockaddr_storage to = loopback(family, port, len);
    connect(fd, reinterpret_cast<sockaddr*>(&to), len);
    send(fd, query.data(), query.size(), 0);
    pollfd p{fd, POLLIN, 0};
    Wire out;
    if (poll(&p, 1, static_cast<int>(timeout.count())) == 1) {
        out.resize(65535);
        ssize_t n = recv(fd, out.data(), out.size(), 0);
        out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    }
    close(fd);
    return out;
}

// Reads one length-prefixed message from a TCP socket. `reader` keeps what
// arrived beyond that message for the next call (several answers may come in
// one segment): pass the same one for every message of a connection.
inline Wire read_tcp_message(int fd, sluice::egress::FrameReader& reader,
                             std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto until = Clock::now() + timeout;
    while (Clock::now() < until) {
        if (auto m = reader.next()) return *m;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 100) != 1) continue;
        uint8_t buf[4096];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        reader.append(buf, static_cast<size_t>(n));
    }
    return {};
}

// One message on a connection that carries only one.
inline Wire read_tcp_message(int fd, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    sluice::egress::FrameReader reader;
    return read_tcp_message(fd, reader, timeout);
}

inline int connect_tcp(uint16_t port, int family = AF_INET) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    sockaddr_storage to = loopback(family, port, len);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), len), 0) << strerror(errno);
    return fd;
}

inline Wire ask_tcp(uint16_t port, const Wire& query, int family = AF_INET) {
    int fd = connect_tcp(port, family);
    auto framed = sluice::egress::frame_message(query);
    send(fd, framed.data(), framed.size(), MSG_NOSIGNAL);
    Wire out = read_tcp_message(fd);
    close(fd);
    return out;
}

// An authoritative-style responder for a handful of records.
class FakeUpstream {
public:
    FakeUpstream() {
        // A port free for both: the UDP port picked may be some TCP
        // connection's local port (the proxy's own connections upstream).
        for (int attempt = 0; attempt < 50 && tcp_ < 0; ++attempt) {
            if (udp_ >= 0) close(udp_);
            udp_ = bound_socket(AF_INET, SOCK_DGRAM);
            port_ = port_of(udp_);
            tcp_ = try_bind(AF_INET, SOCK_STREAM, port_);
        }
        EXPECT_GE(tcp_, 0) << "no port free for both UDP and TCP";
        listen(tcp_, 512);
        pipe(wake_);
        thread_ = std::thread([this] { run(); });
    }
    ~FakeUpstream() {
        stop_ = true;
        [[maybe_unused]] ssize_t n = write(wake_[1], "x", 1);
        thread_.join();
        close(udp_);
        close(tcp_);
        close(wake_[0]);
        close(wake_[1]);
    }

    uint16_t port() const { return port_; }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    // A record in presentation format: "host1.bench.test. 300 IN A 198.18.9.1".
    void add(const std::string& rr_text) {
        std::lock_guard lock(mutex_);
        zone_.push_back(rr_text);
    }
    // Over UDP, queries for `name` get an empty answer with TC set.
    void truncate_over_udp(const std::string& name) {
        std::lock_guard lock(mutex_);
        truncated_.insert(name);
    }
    // Answers for `name` go out only after `delay`.
    void delay(const std::string& name, std::chrono::milliseconds delay) {
        std::lock_guard lock(mutex_);
        delays_[name] = delay;
    }
    int udp_queries() const { return udp_queries_.load(); }
    int tcp_queries() const { return tcp_queries_.load(); }
    int queries() const { return udp_queries() + tcp_queries(); }
    // The names asked, in order (as sent, without the trailing dot).
    std::vector<std::string> asked() const {
        std::lock_guard lock(mutex_);
        return asked_;
    }

private:
    struct Delayed {
        Clock::time_point due;
        Wire answer;
        sockaddr_storage to;
        socklen_t len;
    };

    // The answer to `wire`, or nothing (not a query).
    Wire respond(const Wire& wire, bool over_udp, std::chrono::milliseconds& delay) {
        auto parsed = sluice::egress::parse_packet(wire);
        if (!parsed) return {};
        ldns_pkt* q = parsed->get();
        const ldns_rr* question = ldns_rr_list_rr(ldns_pkt_question(q), 0);
        if (!question) return {};
        std::string name = sluice::egress::dname_text(ldns_rr_owner(question));
        for (char& c : name) c = static_cast<char>(tolower(c));
        const ldns_rr_type qtype = ldns_rr_get_type(question);
        Packet reply(ldns_pkt_new());
        ldns_pkt_set_id(reply.get(), ldns_pkt_id(q));
        ldns_pkt_set_qr(reply.get(), true);
        ldns_pkt_set_aa(reply.get(), true);
        ldns_pkt_set_rd(reply.get(), ldns_pkt_rd(q));
        ldns_pkt_push_rr(reply.get(), LDNS_SECTION_QUESTION, ldns_rr_clone(question));
        std::lock_guard lock(mutex_);
        asked_.push_back(name);
        if (auto d = delays_.find(name); d != delays_.end()) delay = d->second;
        if (over_udp && truncated_.count(name)) {
            ldns_pkt_set_tc(reply.get(), true);
            return wire_of(reply.get());
        }
        // Follow the zone's CNAMEs from the name, adding each record met.
        bool known = false;
        std::string current = name;
        for (int link = 0; link < 20; ++link) {
            std::string next;
            for (const std::string& text : zone_) {
                ldns_rr* rr = rr_from(text);
                std::string owner = sluice::egress::dname_text(ldns_rr_owner(rr));
                for (char& c : owner) c = static_cast<char>(tolower(c));
                if (owner != current) {
                    ldns_rr_free(rr);
                    continue;
                }
                known = true;
                const ldns_rr_type type = ldns_rr_get_type(rr);
                if (type == LDNS_RR_TYPE_CNAME && qtype != LDNS_RR_TYPE_CNAME) {
                    next = sluice::egress::dname_text(ldns_rr_rdf(rr, 0));
                    for (char& c : next) c = static_cast<char>(tolower(c));
                    ldns_pkt_push_rr(reply.get(), LDNS_SECTION_ANSWER, rr);
                } else if (type == qtype) {
                    ldns_pkt_push_rr(reply.get(), LDNS_SECTION_ANSWER, rr);
                } else {
                    ldns_rr_free(rr);
                }
            }
            if (next.empty()) break;
            current = next;
        }
        ldns_pkt_set_rcode(reply.get(), known ? LDNS_RCODE_NOERROR : LDNS_RCODE_NXDOMAIN);
        return wire_of(reply.get());
    }

    void run() {
        std::vector<Delayed> delayed;
        while (!stop_) {
            int wait = 200;
            for (const auto& d : delayed)
                wait = std::min<int>(wait, std::max<int>(0, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(d.due - Clock::now()).count())));
            pollfd p[3] = {{udp_, POLLIN, 0}, {tcp_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
            poll(p, 3, wait);
            const auto now = Clock::now();
            for (auto it = delayed.begin(); it != delayed.end();) {
                if (it->due <= now) {
                    sendto(udp_, it->answer.data(), it->answer.size(), 0, reinterpret_cast<sockaddr*>(&it->to), it->len);
                    it = delayed.erase(it);
                } else {
                    ++it;
                }
            }
            if (p[0].revents & POLLIN) {
                Wire buf(65535);
                sockaddr_storage from{};
                socklen_t len = sizeof(from);
                ssize_t n = recvfrom(udp_, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
                if (n > 0) {
                    ++udp_queries_;
                    buf.resize(static_cast<size_t>(n));
                    std::chrono::milliseconds delay{0};
                    Wire answer = respond(buf, true, delay);
                    if (!answer.empty()) delayed.push_back({now + delay, answer, from, len});
                }
                continue;  // send what is due at once
            }
            if (p[1].revents & POLLIN) {
                int fd = accept(tcp_, nullptr, nullptr);
                if (fd < 0) continue;
                // One query per connection is all the proxy sends.
                Wire query = read_tcp_message(fd, std::chrono::seconds(2));
                if (!query.empty()) {
                    ++tcp_queries_;
                    std::chrono::milliseconds delay{0};
                    Wire answer = respond(query, false, delay);
                    auto framed = sluice::egress::frame_message(answer);
                    send(fd, framed.data(), framed.size(), MSG_NOSIGNAL);
                }
                close(fd);
            }
        }
    }

    int udp_ = -1, tcp_ = -1, wake_[2] = {-1, -1};
    uint16_t port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> udp_queries_{0}, tcp_queries_{0};
    mutable std::mutex mutex_;
    std::vector<std::string> zone_;
    std::set<std::string> truncated_;
    std::map<std::string, std::chrono::milliseconds> delays_;
    std::vector<std::string> asked_;
};

// A UDP port where queries vanish: bound, never read.
class Blackhole {
public:
    Blackhole() : fd_(bound_socket(AF_INET, SOCK_DGRAM)), port_(port_of(fd_)) {}
    ~Blackhole() { close(fd_); }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    // Datagrams waiting in its receive queue: how many queries reached it.
    int received() const {
        int count = 0;
        Wire buf(65535);
        while (recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT) > 0) ++count;
        received_ += count;
        return received_;
    }

private:
    int fd_;
    uint16_t port_;
    mutable int received_ = 0;
};

// A loopback port nothing listens on (UDP and TCP): queries are refused at once.
inline std::string closed_address() {
    int fd = bound_socket(AF_INET, SOCK_DGRAM);
    uint16_t port = port_of(fd);
    close(fd);
    return "127.0.0.1:" + std::to_string(port);
}

// An egress policy parsed from `egress_yaml` (the section's body, indented by
// two spaces) with the zones it needs, as the daemon would get it.
inline std::shared_ptr<const sluice::config::Egress> policy_from(const std::string& egress_yaml) {
    const std::string text =
        "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }\n"
        "zones: { trust: {}, untrust: {} }\n"
        "egress:\n" +
        egress_yaml;
    auto result = sluice::config::parse_config(text, "egress-test.yaml");
    for (const auto& d : result.diagnostics) ADD_FAILURE() << sluice::config::format_diagnostic(d);
    if (!result.ok()) return std::make_shared<sluice::config::Egress>();
    return std::make_shared<sluice::config::Egress>(result.config->egress);
}

}  // namespace egress_test
