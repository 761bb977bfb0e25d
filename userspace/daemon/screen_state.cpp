#include "daemon/screen_state.h"

namespace sluice {

nlohmann::json screen_state_json(const std::vector<CompiledZone>& zones, const std::vector<zone_screen>& screens) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& z : zones) {
        if (z.id >= screens.size()) continue;
        const zone_screen& s = screens[z.id];
        nlohmann::json syn = s.syn_proxy == SYN_PROXY_ALWAYS       ? nlohmann::json("always")
                             : s.syn_proxy == SYN_PROXY_ABOVE_RATE ? nlohmann::json({{"above", s.syn_proxy_rate}})
                                                                   : nlohmann::json("off");
        nlohmann::json j = {{"zone", z.name}, {"id", z.id}, {"syn_proxy", syn},
                            {"syn_proxy_window_scale", s.syn_proxy_wscale}};
        if (s.source_sessions) j["source_sessions"] = s.source_sessions;
        if (s.source_rate) j["source_new_sessions_per_second"] = s.source_rate;
        if (s.destination_rate) j["destination_new_sessions_per_second"] = s.destination_rate;
        if (s.source_icmp_rate) j["source_icmp_packets_per_second"] = s.source_icmp_rate;
        if (s.source_udp_rate) j["source_udp_packets_per_second"] = s.source_udp_rate;
        if (s.destination_icmp_rate) j["destination_icmp_packets_per_second"] = s.destination_icmp_rate;
        if (s.destination_udp_rate) j["destination_udp_packets_per_second"] = s.destination_udp_rate;
        if (s.scan_port_bits || s.scan_host_bits) {
            nlohmann::json scan = {{"window_seconds", s.scan_window_s}, {"action", s.scan_block ? "block" : "count"}};
            if (z.scan_ports) scan["ports"] = z.scan_ports;
            if (z.scan_hosts) scan["hosts"] = z.scan_hosts;
            if (s.scan_block) scan["hold_seconds"] = s.scan_hold_s;
            j["scan"] = scan;
        }
        out.push_back(j);
    }
    return out;
}

}  // namespace sluice
