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
        out.push_back({{"zone", z.name}, {"id", z.id}, {"syn_proxy", syn}, {"syn_proxy_window_scale", s.syn_proxy_wscale}});
    }
    return out;
}

}  // namespace sluice
