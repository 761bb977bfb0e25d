// A device's transmit counters in one of the lab's namespaces, read by this
// process (getifaddrs on a thread inside the namespace, netns_thread.h). It
// takes microseconds, where `ip netns exec NS ip -s link` takes a process
// start of tens of milliseconds whose spread lands between two readings of a
// measurement window: at 150,000 packets/s, 20 ms more on one side is 0.2 %
// of a 10 s window counted as loss (or as more arriving than was sent).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice::bench {

struct TxCounters {
    uint64_t packets = 0;  // handed on by the device
    uint64_t dropped = 0;  // dropped by it on transmit (a veth: the peer's queue was full)
};

// The counters of DEV in NETNS. They are the kernel's 32-bit link
// statistics (what getifaddrs reports): a lab is new every run, and a run
// sends far fewer than 2^32 frames.
Result<TxCounters> tx_counters(const std::string& netns, const std::string& dev);

}  // namespace sluice::bench
