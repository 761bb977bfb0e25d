// The probes of `sluice bench scale`: does the firewall drop what the LAST
// of its N rules matches? Sockets opened in the lab's namespaces by this
// process (a thread enters the namespace with setns), so that no other tool
// or interpreter is needed. The verdicts are read by scale_checks.h.
#pragma once

#include <chrono>
#include <string>

#include "bench/scale_checks.h"
#include "common/result.h"

namespace sluice::bench {

struct UdpProbe {
    std::string lan_ns, wan_ns;  // the namespaces of the LAN and WAN hosts
    std::string dest;            // the WAN host's address
    std::string source;          // the probe's source (an address of the LAN host)
    int port = 0;                // the probe's destination port
    std::string control_source;  // the control's source
    int control_port = 5999;
    int count = 5;               // probe datagrams (the control sends 3)
    std::chrono::milliseconds listen_for{5000};
};

// On the WAN host, counts the datagrams to `port` and `control_port` by
// source; on the LAN host sends 3 control datagrams, then `count` probes, 20
// ms apart, then after 0.2 s a "stop" from the control's source, which
// arrives after whatever of the probe got through. Returns the counts by
// "SRC:PORT".
Result<ProbeCounts> run_udp_probe(const UdpProbe& probe);

// On the LAN host (`lan_ns`), connects from `source` to dest:port: "blocked"
// when the SYN got no answer within the timeout, "passed" when it was
// answered (connected, or refused by a host without a listener: either way
// it went through).
Result<std::string> run_tcp_probe(const std::string& lan_ns, const std::string& source, const std::string& dest,
                                  int port, std::chrono::milliseconds timeout = std::chrono::milliseconds(700));

}  // namespace sluice::bench
