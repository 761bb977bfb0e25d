// One punted TCP connection: the accepted client-side socket, the stage's
// own connection to the server, and the two directions' scans. Bytes are
// forwarded only after they were scanned, so the chunk that completes a
// pattern never reaches the other side. With inspect-bytes, once neither
// direction needs scanning any more, the connection is handed back to the
// fast path (tcp_handoff.h): XDP holds new data back while the stage's
// sockets drain, then forwards the flow itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "inspect/direction_scan.h"
#include "inspect/event_target.h"
#include "inspect/tcp_handoff.h"

namespace sluice::inspect {

class TcpRelay {
public:
    struct Services {
        int epoll_fd;
        Scratch& scratch;
        StageContext& context;
        std::vector<uint8_t>& buffer;            // the worker's read buffer
        std::function<void(TcpRelay*)> retire;   // called once when the relay is finished
    };

    // Takes ownership of the accepted socket; sets up the server leg.
    // Returns null (socket closed, reason counted/logged) when it cannot.
    static std::unique_ptr<TcpRelay> start(int client_fd, Services services);
    ~TcpRelay();

private:
    struct Leg : EventTarget {
        TcpRelay* relay = nullptr;
        bool is_client = false;
        int fd = -1;
        bool read_eof = false;     // the peer sent FIN
        bool write_shut = false;   // we sent FIN
        std::string out;           // scanned bytes waiting to be written to this leg
        uint32_t events = 0;       // epoll interest now registered
        void on_event(uint32_t events) override;
    };

    // Ticks every millisecond while a hand-off waits for the sockets to drain.
    struct HandoffTimer : EventTarget {
        TcpRelay* relay = nullptr;
        int fd = -1;
        void on_event(uint32_t events) override;
    };
    enum class Handoff { none, draining, done };

    explicit TcpRelay(Services services) : s_(std::move(services)) {}
    void maybe_start_handoff();
    void try_complete_handoff();
    void give_up_handoff(bool release_hold);  // keep relaying the connection to its end
    void on_leg(Leg& leg, uint32_t events);
    void on_readable(Leg& from);
    void flush(Leg& to);
    void block(Action action);
    void abort_both();     // one side failed: RST the other
    void finish_if_done();
    void update_interest();
    Leg& other(Leg& leg) { return leg.is_client ? server_ : client_; }
    DirectionScan& scan_from(Leg& leg) { return leg.is_client ? *c2s_ : *s2c_; }
    void retire();

    Services s_;
    Leg client_, server_;
    bool connected_ = false;
    bool retired_ = false;
    bool counted_ = false;  // in StageContext::open_flows
    SessionEntry session_;
    std::optional<DirectionScan> c2s_, s2c_;
    std::shared_ptr<FlowMatches> flow_matches_;
    Handoff handoff_ = Handoff::none;
    HandoffTimer timer_;
    uint64_t handoff_started_ns_ = 0;
};

}  // namespace sluice::inspect
