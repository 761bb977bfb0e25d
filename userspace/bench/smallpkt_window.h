// One measurement window of `sluice bench smallpkt`: the counters read at
// its start and at its end, and what follows from them — the rates, the
// loss, and the CPU time per forwarded packet from the kernel's own
// accounting (/proc/stat, proc_stat.h).
//
// The CPU time is the softirq time of all CPUs over the window divided by
// the packets the receiver counted. On veth everything after the
// generator's send runs in softirq on the sending CPU: the firewall's
// receive, its forwarding (kernel, nftables, XDP or TC), the transmit to the
// WAN host and the receiver's counting program. The generator's own
// syscalls are system time and not in it. So the number is the firewall's
// work plus the veth and receiver work that every configuration pays;
// differences and ratios between configurations are the firewall's.
#pragma once

#include <cstdint>

#include "bench/proc_stat.h"
#include "common/result.h"

namespace sluice::bench {

// The counters at one moment.
struct WindowReading {
    double at_seconds = 0;  // a steady clock
    CpuSample cpu;          // /proc/stat "cpu " line, USER_HZ ticks
    uint64_t offered = 0;   // frames the LAN host handed to its device (sent + dropped there)
    uint64_t received = 0;  // the benchmark's frames the receiver counted
};

struct WindowResult {
    double seconds = 0;
    uint64_t offered_packets = 0, received_packets = 0;
    double offered_pps = 0, received_pps = 0;
    double loss_percent = 0;  // (offered - received) / offered; 0 when more arrived than were counted out
    double softirq_seconds = 0, busy_seconds = 0;  // all CPUs; busy = not idle, everything included
    double softirq_ns_per_packet = 0, busy_ns_per_packet = 0;  // per received packet
    // The window's wall time on every CPU less their idle time: the busy
    // time clocked rather than tick-sampled (proc_stat.h); 0 when /proc/stat
    // listed no CPU.
    double nonidle_seconds = 0, nonidle_ns_per_packet = 0;
};

// The window between two readings; user_hz is /proc/stat's unit
// (sysconf(_SC_CLK_TCK)). An Error when no time passed, a counter went
// backwards, or nothing was offered or received (no per-packet number).
Result<WindowResult> window_result(const WindowReading& before, const WindowReading& after, long user_hz);

}  // namespace sluice::bench
