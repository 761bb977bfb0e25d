#include "bench/smallpkt_window.h"

#include <string>

namespace sluice::bench {

Result<WindowResult> window_result(const WindowReading& before, const WindowReading& after, long user_hz) {
    if (user_hz <= 0) return make_error("USER_HZ is " + std::to_string(user_hz));
    if (after.at_seconds <= before.at_seconds) return make_error("the measurement window has no length");
    if (after.cpu.total < before.cpu.total || after.cpu.idle < before.cpu.idle ||
        after.cpu.softirq < before.cpu.softirq)
        return make_error("/proc/stat went backwards during the measurement");
    if (after.offered < before.offered || after.received < before.received)
        return make_error("a packet counter went backwards during the measurement (offered " +
                          std::to_string(before.offered) + " -> " + std::to_string(after.offered) + ", received " +
                          std::to_string(before.received) + " -> " + std::to_string(after.received) + ")");
    WindowResult r;
    r.seconds = after.at_seconds - before.at_seconds;
    r.offered_packets = after.offered - before.offered;
    r.received_packets = after.received - before.received;
    if (r.offered_packets == 0) return make_error("the LAN host sent nothing during the measurement");
    if (r.received_packets == 0)
        return make_error("nothing arrived at the receiver during the measurement (" +
                          std::to_string(r.offered_packets) + " frames sent)");
    r.offered_pps = static_cast<double>(r.offered_packets) / r.seconds;
    r.received_pps = static_cast<double>(r.received_packets) / r.seconds;
    const double lost = static_cast<double>(r.offered_packets) - static_cast<double>(r.received_packets);
    r.loss_percent = lost > 0 ? 100 * lost / static_cast<double>(r.offered_packets) : 0;
    const double tick = 1.0 / static_cast<double>(user_hz);
    r.softirq_seconds = static_cast<double>(after.cpu.softirq - before.cpu.softirq) * tick;
    const uint64_t total = after.cpu.total - before.cpu.total, idle = after.cpu.idle - before.cpu.idle;
    r.busy_seconds = static_cast<double>(total >= idle ? total - idle : 0) * tick;
    const double clocked = r.seconds * after.cpu.cpus - static_cast<double>(idle) * tick;
    r.nonidle_seconds = clocked > 0 ? clocked : 0;
    const double received = static_cast<double>(r.received_packets);
    r.softirq_ns_per_packet = r.softirq_seconds * 1e9 / received;
    r.busy_ns_per_packet = r.busy_seconds * 1e9 / received;
    r.nonidle_ns_per_packet = r.nonidle_seconds * 1e9 / received;
    return r;
}

}  // namespace sluice::bench
