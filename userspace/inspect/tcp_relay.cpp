#include "inspect/tcp_relay.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <iostream>

#include "inspect/sockets.h"
#include "inspect/time_wait.h"

namespace sluice::inspect {
namespace {

void log(const std::string& message) { std::cerr << "sluice: inspect: " << message << std::endl; }

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A segment that left XDP just before the hold reaches the socket within
// microseconds; the drain check waits this long before trusting the queues.
constexpr uint64_t kHoldSettleNs = 2'000'000;
// Sockets that do not drain by then (a receiver that stopped reading) keep
// being relayed.
constexpr uint64_t kDrainTimeoutNs = 1'000'000'000;

}  // namespace

std::unique_ptr<TcpRelay> TcpRelay::start(int client_fd, Services services) {
    Endpoint original_destination = local_endpoint(client_fd);
    Endpoint client = peer_endpoint(client_fd);
    auto session = services.context.sessions.find(IPPROTO_TCP, client, original_destination);
    if (!session) {
        // The session expired, or the flow reached the listener by mistake.
        log("no session for " + client.text() + " → " + original_destination.text() + "; connection reset");
        close_with_reset(client_fd);
        return nullptr;
    }
    auto ruleset = services.context.ruleset(session->value.ruleset_id);
    if (!ruleset) {
        // The config changed between the flow's first packet and its accept.
        log("ruleset id " + std::to_string(session->value.ruleset_id) + " of " + client.text() + " → " +
            original_destination.text() + " is no longer configured; connection reset");
        close_with_reset(client_fd);
        return nullptr;
    }
    std::unique_ptr<TcpRelay> relay(new TcpRelay(std::move(services)));
    relay->session_ = *session;
    relay->client_.relay = relay->server_.relay = relay.get();
    relay->client_.is_client = true;
    relay->client_.fd = client_fd;
    CounterTable* counters = relay->s_.context.counters;
    if (counters) counters->slot(ruleset->name).add(Counter::connections);

    auto c2s = DirectionScan::open(ruleset, Direction::client_to_server, relay->s_.scratch, counters);
    auto s2c = DirectionScan::open(ruleset, Direction::server_to_client, relay->s_.scratch, counters);
    relay->flow_matches_ = std::make_shared<FlowMatches>();
    if (c2s) c2s->share(relay->flow_matches_);
    if (s2c) s2c->share(relay->flow_matches_);
    if (!c2s || !s2c) {
        log("cannot open scan streams: " + (c2s ? s2c.error().message : c2s.error().message));
        if (counters) counters->slot(ruleset->name).add(Counter::stage_errors);
        relay->abort_both();
        return nullptr;
    }
    relay->c2s_.emplace(std::move(c2s.value()));
    relay->s2c_.emplace(std::move(s2c.value()));

    ServerLeg leg = server_leg(*session);
    auto server_fd = open_transparent(SOCK_STREAM, leg.local);
    if (server_fd) {
        relay->server_.fd = server_fd.value();
        if (auto s = connect_to(server_fd.value(), leg.remote); !s) server_fd = s.error();
    }
    if (!server_fd) {
        log("server leg " + leg.local.text() + " → " + leg.remote.text() + ": " + server_fd.error().message);
        if (counters) counters->slot(ruleset->name).add(Counter::stage_errors);
        relay->abort_both();
        return nullptr;
    }
    for (Leg* l : {&relay->client_, &relay->server_}) {
        epoll_event ev{};
        ev.data.ptr = static_cast<EventTarget*>(l);
        if (epoll_ctl(relay->s_.epoll_fd, EPOLL_CTL_ADD, l->fd, &ev) != 0) {
            relay->abort_both();
            return nullptr;
        }
    }
    relay->update_interest();
    relay->counted_ = true;
    relay->s_.context.open_flows.fetch_add(1, std::memory_order_relaxed);
    return relay;
}

TcpRelay::~TcpRelay() {
    if (timer_.fd >= 0) close(timer_.fd);
    if (counted_) s_.context.open_flows.fetch_sub(1, std::memory_order_relaxed);
    // Still open: the stage is going away under the connection; reset it.
    for (Leg* l : {&client_, &server_})
        if (l->fd >= 0) close_with_reset(l->fd);
}

void TcpRelay::Leg::on_event(uint32_t events) { relay->on_leg(*this, events); }

void TcpRelay::on_leg(Leg& leg, uint32_t events) {
    if (retired_ || leg.fd < 0) return;
    if (!leg.is_client && !connected_) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(leg.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            // The server refused or is unreachable: so is the client told.
            abort_both();
            return;
        }
        if (!(events & EPOLLOUT)) return;
        connected_ = true;
        update_interest();
        return;
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !leg.read_eof) {
        on_readable(leg);
    } else if ((events & (EPOLLHUP | EPOLLERR)) && !leg.write_shut) {
        // The peer sent FIN, then reset (or vanished) while bytes may still be
        // due to it: nothing more can reach it, so the other side is told too.
        // (Ignoring this would also leave epoll reporting it forever.)
        abort_both();
        return;
    }
    if (retired_) return;
    if (events & EPOLLOUT) flush(leg);
    if (retired_) return;
    finish_if_done();
    if (retired_) return;
    update_interest();
    if (handoff_ == Handoff::none) maybe_start_handoff();
    else if (handoff_ == Handoff::draining) try_complete_handoff();
}

void TcpRelay::on_readable(Leg& from) {
    ssize_t n = recv(from.fd, s_.buffer.data(), s_.buffer.size(), MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        abort_both();
        return;
    }
    DirectionScan& scan = scan_from(from);
    Leg& to = other(from);
    if (n == 0) {
        from.read_eof = true;
        ScanOutcome outcome = scan.finish(s_.scratch);
        if (outcome.block) {
            block(*outcome.block);
            return;
        }
        if (to.out.empty() && !to.write_shut) {
            shutdown(to.fd, SHUT_WR);
            to.write_shut = true;
        }
        return;
    }
    std::span<const uint8_t> bytes(s_.buffer.data(), static_cast<size_t>(n));
    ScanOutcome outcome = scan.feed(bytes, s_.scratch);
    if (outcome.block) {
        block(*outcome.block);
        return;
    }
    to.out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    flush(to);
}

void TcpRelay::flush(Leg& to) {
    while (!to.out.empty()) {
        ssize_t n = send(to.fd, to.out.data(), to.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
            abort_both();
            return;
        }
        to.out.erase(0, static_cast<size_t>(n));
    }
    if (other(to).read_eof && !to.write_shut) {
        shutdown(to.fd, SHUT_WR);
        to.write_shut = true;
    }
}

void TcpRelay::block(Action action) {
    const bool reject = action == Action::reject;
    if (auto s = s_.context.sessions.set_verdict(session_, reject ? SESSION_VERDICT_RESET : SESSION_VERDICT_DROP); !s)
        log("cannot write the verdict: " + s.error().message);
    if (s_.context.counters)
        s_.context.counters->slot(c2s_->ruleset().name).add(reject ? Counter::resets : Counter::drops);
    for (Leg* l : {&client_, &server_}) {
        if (l->fd < 0) continue;
        if (reject) close_with_reset(l->fd);
        else close_silently(l->fd);
        l->fd = -1;
    }
    retire();
}

void TcpRelay::abort_both() {
    for (Leg* l : {&client_, &server_}) {
        if (l->fd < 0) continue;
        close_with_reset(l->fd);
        l->fd = -1;
    }
    retire();
}

void TcpRelay::finish_if_done() {
    if (!(client_.read_eof && server_.read_eof && client_.out.empty() && server_.out.empty())) return;
    for (Leg* l : {&client_, &server_}) {
        if (l->fd >= 0) close(l->fd);
        l->fd = -1;
    }
    // The leg that closed first is in TIME_WAIT on the client's tuple, which
    // would stop the client from connecting again from the same port.
    remove_relay_time_waits(session_);
    retire();
}

void TcpRelay::update_interest() {
    for (Leg* l : {&client_, &server_}) {
        if (l->fd < 0) continue;
        Leg& o = other(*l);
        uint32_t want = 0;
        if (!l->is_client && !connected_) {
            want = EPOLLOUT;
        } else if (connected_) {
            // Read only when what we read last has been passed on (backpressure).
            if (!l->read_eof && o.out.empty()) want |= EPOLLIN;
            if (!l->out.empty()) want |= EPOLLOUT;
        }
        if (l->read_eof && l->write_shut) {
            // Done both ways: HUP would be reported forever.
            if (l->events != UINT32_MAX) epoll_ctl(s_.epoll_fd, EPOLL_CTL_DEL, l->fd, nullptr);
            l->events = UINT32_MAX;
            continue;
        }
        if (want == l->events) continue;
        epoll_event ev{};
        ev.events = want;
        ev.data.ptr = static_cast<EventTarget*>(l);
        epoll_ctl(s_.epoll_fd, EPOLL_CTL_MOD, l->fd, &ev);
        l->events = want;
    }
}

void TcpRelay::HandoffTimer::on_event(uint32_t) {
    uint64_t ticks = 0;
    (void)!read(fd, &ticks, sizeof(ticks));
    if (!relay->retired_ && relay->handoff_ == Handoff::draining) relay->try_complete_handoff();
}

void TcpRelay::maybe_start_handoff() {
    const CompiledRuleset& ruleset = c2s_->ruleset();
    if (!ruleset.inspect_bytes || !connected_ || c2s_->needs_scanning() || s2c_->needs_scanning()) return;
    // A closing connection is relayed to its end: its FINs are in the
    // sockets' sequence space already.
    if (client_.read_eof || server_.read_eof || client_.write_shut || server_.write_shut) return;
    handoff_ = Handoff::done;  // unless everything below works
    auto c = leg_options(client_.fd);
    auto sv = leg_options(server_.fd);
    if (!c || !sv || splice_refusal(c.value(), sv.value())) {
        give_up_handoff(false);
        return;
    }
    timer_.relay = this;
    timer_.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    itimerspec every_ms{};
    every_ms.it_interval.tv_nsec = every_ms.it_value.tv_nsec = 1'000'000;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = static_cast<EventTarget*>(&timer_);
    if (timer_.fd < 0 || timerfd_settime(timer_.fd, 0, &every_ms, nullptr) != 0 ||
        epoll_ctl(s_.epoll_fd, EPOLL_CTL_ADD, timer_.fd, &ev) != 0) {
        give_up_handoff(false);
        return;
    }
    if (auto s = s_.context.sessions.set_hold(session_, true); !s) {
        give_up_handoff(true);
        return;
    }
    handoff_ = Handoff::draining;
    handoff_started_ns_ = monotonic_ns();
}

void TcpRelay::try_complete_handoff() {
    uint64_t waited = monotonic_ns() - handoff_started_ns_;
    if (client_.read_eof || server_.read_eof || client_.write_shut || server_.write_shut || waited > kDrainTimeoutNs) {
        give_up_handoff(true);
        return;
    }
    if (waited < kHoldSettleNs || !client_.out.empty() || !server_.out.empty() || !leg_drained(client_.fd) ||
        !leg_drained(server_.fd))
        return;
    auto cl = freeze_leg(client_.fd);
    auto sl = cl ? freeze_leg(server_.fd) : Result<LegNumbers>(cl.error());
    auto flow = sl ? s_.context.sessions.entries(session_) : std::nullopt;
    // Frozen sockets take no more packets; recheck that none came meanwhile.
    if (!flow || !leg_drained(client_.fd) || !leg_drained(server_.fd)) {
        thaw_leg(client_.fd);
        thaw_leg(server_.fd);
        if (!flow) give_up_handoff(true);
        return;
    }
    SplicePair splice = splice_between(cl.value(), sl.value(), flow->initiator.value.splice.last_tsval,
                                       flow->reply.value.splice.last_tsval);
    if (auto s = s_.context.sessions.splice(*flow, splice.client_to_server, splice.server_to_client); !s) {
        log("cannot hand " + server_leg(session_).remote.text() + " back to the fast path: " + s.error().message);
        thaw_leg(client_.fd);
        thaw_leg(server_.fd);
        give_up_handoff(true);
        return;
    }
    if (s_.context.counters) s_.context.counters->slot(c2s_->ruleset().name).add(Counter::handoffs);
    for (Leg* l : {&client_, &server_}) {
        close_silently(l->fd);  // in TCP_REPAIR already: no FIN, no RST
        l->fd = -1;
    }
    handoff_ = Handoff::done;
    retire();
}

void TcpRelay::give_up_handoff(bool release_hold) {
    handoff_ = Handoff::done;
    if (timer_.fd >= 0) {
        close(timer_.fd);
        timer_.fd = -1;
    }
    if (release_hold) {
        if (auto s = s_.context.sessions.set_hold(session_, false); !s)
            log("cannot release the hand-off hold: " + s.error().message);
    }
    if (s_.context.counters) s_.context.counters->slot(c2s_->ruleset().name).add(Counter::handoff_refused);
}

void TcpRelay::retire() {
    if (retired_) return;
    retired_ = true;
    s_.retire(this);
}

}  // namespace sluice::inspect
