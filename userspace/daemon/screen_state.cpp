#include "daemon/screen_state.h"

namespace sluice {

std::vector<state::ScreenZone> screen_state(const std::vector<CompiledZone>& zones,
                                           const std::vector<zone_screen>& screens) {
    std::vector<state::ScreenZone> out;
    for (const auto& z : zones) {
        if (z.id >= screens.size()) continue;
        const zone_screen& s = screens[z.id];
        state::ScreenZone j;
        j.zone = z.name;
        j.id = z.id;
        j.syn_proxy = s.syn_proxy == SYN_PROXY_ALWAYS ? "always" : s.syn_proxy == SYN_PROXY_ABOVE_RATE ? "above" : "off";
        if (s.syn_proxy == SYN_PROXY_ABOVE_RATE) j.syn_proxy_rate = s.syn_proxy_rate;
        j.syn_proxy_window_scale = s.syn_proxy_wscale;
        j.source_sessions = s.source_sessions;
        j.source_new_sessions_per_second = s.source_rate;
        j.destination_new_sessions_per_second = s.destination_rate;
        j.source_icmp_packets_per_second = s.source_icmp_rate;
        j.source_udp_packets_per_second = s.source_udp_rate;
        j.destination_icmp_packets_per_second = s.destination_icmp_rate;
        j.destination_udp_packets_per_second = s.destination_udp_rate;
        if (s.scan_port_bits || s.scan_host_bits)
            j.scan = state::ScanScreen{s.scan_window_s, s.scan_block ? "block" : "count", z.scan_ports, z.scan_hosts,
                                       s.scan_block ? s.scan_hold_s : 0u};
        out.push_back(j);
    }
    return out;
}

}  // namespace sluice
