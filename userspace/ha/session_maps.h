// The maps both ends of session sync read and write: the session tables
// and the NAT port reservations (file descriptors of the daemon's datapath).
#pragma once

namespace sluice::ha {

struct SessionMaps {
    int sessions_v4 = -1;
    int sessions_v6 = -1;
    int nat_ports = -1;
};

}  // namespace sluice::ha
