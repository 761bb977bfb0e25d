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
        out.push_back(j);
    }
    return out;
}

}  // namespace sluice
