// One inspection worker: a thread with its own epoll loop, its own listeners
// (SO_REUSEPORT: the kernel spreads new flows across workers by their tuple),
// its own hyperscan scratch, and every connection it accepted. Both legs of a
// connection, and both directions of a UDP flow, stay on the worker that got
// the flow's first packet.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "inspect/event_target.h"
#include "inspect/tcp_relay.h"
#include "inspect/udp_relay.h"

namespace sluice::inspect {

struct StagePorts {
    uint16_t tcp = 0;  // host order; 0 = pick one
    uint16_t udp = 0;
};

class Worker {
public:
    // Opens the worker's listeners on the given ports (0: let the kernel pick;
    // the ports it picked are in ports()).
    static Result<std::unique_ptr<Worker>> open(StageContext& context, StagePorts ports);
    ~Worker();

    StagePorts ports() const { return ports_; }
    // The loop; returns after stop().
    void run();
    // Thread-safe.
    void stop();

private:
    struct Listener : EventTarget {
        Worker* worker = nullptr;
        int fd = -1;
        bool tcp = false;
        void on_event(uint32_t events) override;
    };

    explicit Worker(StageContext& context);
    void accept_all(int listener_fd);
    void retire(TcpRelay* relay) { retired_.push_back(relay); }

    StageContext& context_;
    int epoll_fd_ = -1;
    int stop_fd_ = -1;
    StagePorts ports_;
    Listener listeners_[4];  // TCP v4, TCP v6, UDP v4, UDP v6
    Scratch scratch_;
    std::vector<uint8_t> buffer_;
    std::unordered_map<TcpRelay*, std::unique_ptr<TcpRelay>> relays_;
    std::vector<TcpRelay*> retired_;
    std::unique_ptr<UdpRelay> udp_;
};

}  // namespace sluice::inspect
