// iperf3 runs through the firewall: the client on the environment's traffic
// source (the LAN host), the server already listening on the target (the
// cluster's WAN host). One test at a time: the server serves one client.
#pragma once

#include <string>

#include "cluster/environment.h"
#include "cluster/executor.h"
#include "cluster/netns_cluster.h"
#include "perftest/compare.h"

namespace sluice::perftest {

// The client argv: iperf3 [-6] -c TARGET -p PORT -P streams -t seconds -J.
std::vector<std::string> iperf_client_argv(const std::string& target, Family family, int streams, int seconds,
                                           bool json, int port = cluster::kIperfPort);

// One iperf3 client run on `environment.traffic_source()`, JSON parsed. The
// run is bounded by params.timeout_seconds (or seconds + 30 when 0). A
// "server is busy" answer (the previous test's server still winding down) is
// retried a few times. Failures come back as Measurement::error.
Measurement measure_throughput(cluster::Executor& executor, const cluster::Environment& environment, Family family,
                               const cluster::IperfParams& params);

// The environment's target for a family ("" when it has none).
const std::string& target_of(const cluster::Environment& environment, Family family);

}  // namespace sluice::perftest
