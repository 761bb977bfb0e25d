// Forwarding a query to the configured upstream resolvers, one attempt at a
// time, without blocking: the proxy's event loop drives many exchanges at
// once, so one dead upstream never holds the other queries.
//
// Each attempt is a fresh socket connected to one upstream (a random source
// port per attempt, and a random query id, so an off-path forger has both to
// guess); only a message answering the question sent under that id counts.
// An error (ICMP port unreachable, a reset, a garbled stream) or the
// per-attempt timeout moves on to the next upstream at once. The upstream
// that answered last is where the next exchange starts, so a dead first
// upstream costs its timeout once, not on every query. A truncated (TC) UDP
// answer is asked again over TCP from the same upstream. The whole exchange
// never takes longer than upstreams x timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/egress_config.h"
#include "egress/dns_message.h"
#include "egress/tcp_framing.h"
#include "inspect/sockets.h"

namespace sluice::egress {

using Clock = std::chrono::steady_clock;

// Where the next exchange starts: the upstream that answered last. Shared by
// every exchange (and thread) of a proxy.
class UpstreamRotation {
public:
    size_t first(size_t count) const { return count ? preferred_.load(std::memory_order_relaxed) % count : 0; }
    void answered(size_t index) { preferred_.store(index, std::memory_order_relaxed); }

private:
    std::atomic<size_t> preferred_{0};
};

inspect::Endpoint upstream_endpoint(const config::EgressUpstream& upstream);

// A random 16-bit query id from the kernel's CSPRNG.
uint16_t random_query_id();

class UpstreamExchange {
public:
    enum class State { waiting, answered, failed };

    // tcp: start over TCP (the client asked over TCP); UDP otherwise.
    UpstreamExchange(std::vector<inspect::Endpoint> upstreams, UpstreamRotation& rotation, const Query& query,
                     bool tcp, std::chrono::milliseconds timeout);
    ~UpstreamExchange();
    UpstreamExchange(const UpstreamExchange&) = delete;
    UpstreamExchange& operator=(const UpstreamExchange&) = delete;

    // Opens the first attempt. `failed` when there is no upstream, or none
    // could even be sent to.
    State start(Clock::time_point now);
    // The current attempt's socket (-1 when the exchange is over) and what it
    // waits for (EPOLLIN or EPOLLOUT). Both change from one attempt to the
    // next: re-read them after every call.
    int fd() const { return fd_; }
    uint32_t events() const { return events_; }
    Clock::time_point deadline() const { return deadline_; }
    // The socket is ready (epoll events), or the deadline passed.
    State on_ready(uint32_t events, Clock::time_point now);
    State on_deadline(Clock::time_point now);

    State state() const { return state_; }
    // answered: the response, and the id it was asked under.
    Packet take_response() { return std::move(response_); }
    uint16_t sent_id() const { return id_; }
    // Attempts that failed or timed out so far, and why the last one did.
    size_t failed_attempts() const { return failed_attempts_; }
    const std::string& last_error() const { return last_error_; }

private:
    State open_attempt(Clock::time_point now, bool tcp);
    State attempt_failed(Clock::time_point now, std::string why);
    State read_udp(Clock::time_point now);
    State write_tcp(Clock::time_point now);
    State read_tcp(Clock::time_point now);
    State accept_response(Clock::time_point now, std::vector<uint8_t> wire, bool over_tcp);
    void close_attempt();

    std::vector<inspect::Endpoint> upstreams_;
    UpstreamRotation& rotation_;
    const Query& query_;
    bool start_tcp_;
    std::chrono::milliseconds timeout_;

    State state_ = State::waiting;
    size_t tried_ = 0;           // attempts opened, over the rotation order
    size_t current_ = 0;         // index into upstreams_ of the current attempt
    Clock::time_point overall_deadline_{};
    Clock::time_point deadline_{};
    int fd_ = -1;
    uint32_t events_ = 0;
    bool tcp_ = false;
    bool tcp_connected_ = false;
    uint16_t id_ = 0;
    std::vector<uint8_t> out_;   // TCP: framed query still to send
    size_t out_sent_ = 0;
    FrameReader in_;
    Packet response_;
    size_t failed_attempts_ = 0;
    std::string last_error_;
};

// One exchange driven to its end with poll(): for callers outside an event
// loop (tools, tests). The error says why every upstream failed.
struct UpstreamAnswer {
    Packet response;
    uint16_t id = 0;
    size_t failed_attempts = 0;
};
Result<UpstreamAnswer> exchange_blocking(const std::vector<config::EgressUpstream>& upstreams,
                                         UpstreamRotation& rotation, const Query& query, bool tcp,
                                         std::chrono::milliseconds timeout);

}  // namespace sluice::egress
