// The proxy's four listeners: UDP and TCP on 127.0.0.1 and ::1, one port.
// Transparent (the datapath steers DNS to any resolver address here, and
// the sockets keep the address the client sent to): the inspection stage's
// own listeners. Plain (tests, and a proxy a client addresses directly):
// ordinary loopback sockets, no privilege needed.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace sluice::egress {

struct ProxyListeners {
    int udp4 = -1, udp6 = -1, tcp4 = -1, tcp6 = -1;
    uint16_t port = 0;  // host order

    void close_all();
};

// port 0: one free port, chosen for UDP on 127.0.0.1 and taken for the
// others (chosen again when one of them already has it). On an error nothing
// is left open.
Result<ProxyListeners> open_proxy_listeners(uint16_t port, bool transparent);

}  // namespace sluice::egress
