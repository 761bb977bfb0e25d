// A worker's punted UDP flows. The first datagram of a flow reaches the
// stage's listener (with its original destination); the stage then opens
// two connected transparent sockets, one bound to the original destination
// facing the client and one bound to the client's (translated) address facing
// the server, so tc_punt_prog finds them by the flow's tuples from then on.
// Every datagram is scanned on its own; a matching one is dropped and the
// flow goes on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "inspect/direction_scan.h"
#include "inspect/event_target.h"

namespace sluice::inspect {

class UdpRelay {
public:
    UdpRelay(int epoll_fd, Scratch& scratch, StageContext& context, std::vector<uint8_t>& buffer)
        : epoll_fd_(epoll_fd), scratch_(scratch), context_(context), buffer_(buffer) {}
    ~UdpRelay();

    // Datagrams queued on a stage listener.
    void on_listener(int listener_fd);
    // Closes flows idle longer than the context's UDP idle time.
    void sweep(uint64_t now_ns);

private:
    struct Flow;
    struct Socket : EventTarget {
        Flow* flow = nullptr;
        bool client_facing = false;
        int fd = -1;
        void on_event(uint32_t events) override;
    };
    struct Flow {
        UdpRelay* relay = nullptr;
        std::string key;
        SessionEntry session;
        Socket client, server;  // client: bound to the original destination; server: to the client
        std::optional<DirectionScan> c2s, s2c;
        uint64_t last_active_ns = 0;
    };

    Flow* open_flow(const Endpoint& client, const Endpoint& original_destination, const SessionEntry& session,
                    std::shared_ptr<const CompiledRuleset> ruleset, DirectionScan c2s);
    // Scans one datagram of a direction and passes it on unless it matched.
    void relay(Flow& flow, bool from_client, std::span<const uint8_t> bytes);
    void on_socket(Socket& socket);
    void close_flow(Flow& flow);

    int epoll_fd_;
    Scratch& scratch_;
    StageContext& context_;
    std::vector<uint8_t>& buffer_;
    std::unordered_map<std::string, std::unique_ptr<Flow>> flows_;
};

}  // namespace sluice::inspect
