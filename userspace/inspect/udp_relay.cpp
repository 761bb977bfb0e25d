#include "inspect/udp_relay.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "inspect/sockets.h"

namespace sluice::inspect {
namespace {

void log(const std::string& message) { std::cerr << "sluice: inspect: " << message << std::endl; }

// Datagrams read per readiness event before the loop serves others.
constexpr int kBatch = 64;

}  // namespace

UdpRelay::~UdpRelay() {
    for (auto& [key, flow] : flows_) close_flow(*flow);
}

void UdpRelay::on_listener(int listener_fd) {
    for (int i = 0; i < kBatch; ++i) {
        Endpoint client, original_destination;
        ssize_t n = receive_datagram(listener_fd, reinterpret_cast<char*>(buffer_.data()), buffer_.size(), client,
                                     original_destination);
        if (n < 0) return;
        if (original_destination.family == 0) continue;  // not a punted datagram
        std::span<const uint8_t> bytes(buffer_.data(), static_cast<size_t>(n));
        std::string key = client.text() + ">" + original_destination.text();
        if (auto it = flows_.find(key); it != flows_.end()) {
            relay(*it->second, true, bytes);  // sent before the flow's sockets existed
            continue;
        }
        auto session = context_.sessions.find(IPPROTO_UDP, client, original_destination);
        if (!session) {
            log("no session for UDP " + client.text() + " → " + original_destination.text() + "; datagram dropped");
            continue;
        }
        auto ruleset = context_.ruleset(session->value.ruleset_id);
        if (!ruleset) {
            log("ruleset id " + std::to_string(session->value.ruleset_id) + " is no longer configured; datagram dropped");
            continue;
        }
        // The first datagram decides whether the flow's sockets are opened.
        auto scan = DirectionScan::for_datagrams(ruleset, Direction::client_to_server, context_.counters);
        ScanOutcome outcome = scan.datagram(bytes, scratch_);
        if (outcome.block) {
            if (context_.counters) context_.counters->slot(ruleset->name).add(Counter::drops);
            continue;
        }
        Flow* flow = open_flow(client, original_destination, *session, ruleset, std::move(scan));
        if (!flow) continue;
        if (send(flow->server.fd, bytes.data(), bytes.size(), MSG_DONTWAIT) < 0 && errno != ECONNREFUSED)
            log("UDP send to " + peer_endpoint(flow->server.fd).text() + ": " + std::strerror(errno));
        if (outcome.offload)
            if (auto s = context_.sessions.release_direction(flow->session); !s) log(s.error().message);
    }
}

UdpRelay::Flow* UdpRelay::open_flow(const Endpoint& client, const Endpoint& original_destination,
                                    const SessionEntry& session, std::shared_ptr<const CompiledRuleset> ruleset,
                                    DirectionScan c2s) {
    auto flow = std::make_unique<Flow>();
    flow->relay = this;
    flow->session = session;
    flow->key = client.text() + ">" + original_destination.text();
    flow->c2s.emplace(std::move(c2s));
    flow->s2c.emplace(DirectionScan::for_datagrams(ruleset, Direction::server_to_client, context_.counters));
    ServerLeg leg = server_leg(session);
    struct Plan {
        Socket* socket;
        const Endpoint& local;
        const Endpoint& remote;
    } plans[] = {{&flow->client, original_destination, client}, {&flow->server, leg.local, leg.remote}};
    for (auto& p : plans) {
        p.socket->flow = flow.get();
        p.socket->client_facing = p.socket == &flow->client;
        auto fd = open_transparent(SOCK_DGRAM, p.local);
        Status connected = fd ? connect_to(fd.value(), p.remote) : Status(fd.error());
        if (fd) p.socket->fd = fd.value();
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = static_cast<EventTarget*>(p.socket);
        if (!connected || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.socket->fd, &ev) != 0) {
            log("UDP flow " + client.text() + " → " + original_destination.text() + ": " +
                (connected ? std::string(std::strerror(errno)) : connected.error().message));
            if (context_.counters) context_.counters->slot(ruleset->name).add(Counter::stage_errors);
            for (Socket* s : {&flow->client, &flow->server})
                if (s->fd >= 0) close(s->fd);
            return nullptr;
        }
    }
    flow->last_active_ns = 0;
    Flow* raw = flow.get();
    flows_[raw->key] = std::move(flow);
    context_.open_flows.fetch_add(1, std::memory_order_relaxed);
    return raw;
}

void UdpRelay::Socket::on_event(uint32_t) { flow->relay->on_socket(*this); }

void UdpRelay::on_socket(Socket& socket) {
    for (int i = 0; i < kBatch; ++i) {
        ssize_t n = recv(socket.fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            continue;  // e.g. ECONNREFUSED from an earlier send: not this datagram's
        }
        relay(*socket.flow, socket.client_facing, std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(n)));
    }
}

void UdpRelay::relay(Flow& flow, bool from_client, std::span<const uint8_t> bytes) {
    DirectionScan& scan = from_client ? *flow.c2s : *flow.s2c;
    bool was_offloaded = scan.offloaded();
    ScanOutcome outcome = scan.datagram(bytes, scratch_);
    flow.last_active_ns = 0;
    if (outcome.block) {
        if (context_.counters) context_.counters->slot(scan.ruleset().name).add(Counter::drops);
        return;
    }
    Socket& to = from_client ? flow.server : flow.client;
    if (send(to.fd, bytes.data(), bytes.size(), MSG_DONTWAIT) < 0 && errno != ECONNREFUSED && errno != EAGAIN)
        log("UDP send to " + peer_endpoint(to.fd).text() + ": " + std::strerror(errno));
    if (outcome.offload && !was_offloaded) {
        // This direction's next datagrams take the fast path.
        SessionEntry entry = from_client ? flow.session : reverse_of(flow.session);
        if (auto s = context_.sessions.release_direction(entry); !s) log(s.error().message);
    }
}

void UdpRelay::sweep(uint64_t now_ns) {
    for (auto it = flows_.begin(); it != flows_.end();) {
        Flow& flow = *it->second;
        if (flow.last_active_ns == 0) flow.last_active_ns = now_ns;  // active since the last sweep
        if (now_ns - flow.last_active_ns > context_.udp_idle_ns) {
            close_flow(flow);
            it = flows_.erase(it);
        } else {
            ++it;
        }
    }
}

void UdpRelay::close_flow(Flow& flow) {
    context_.open_flows.fetch_sub(1, std::memory_order_relaxed);
    for (Socket* s : {&flow.client, &flow.server}) {
        if (s->fd >= 0) close(s->fd);
        s->fd = -1;
    }
}

}  // namespace sluice::inspect
