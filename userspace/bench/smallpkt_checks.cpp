#include "bench/smallpkt_checks.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "bench/name_list.h"

namespace sluice::bench {

const std::vector<std::string>& smallpkt_configs() {
    static const std::vector<std::string> configs{"kernel",    "nft-ct",         "sluice-native",
                                                  "sluice-tc", "sluice-generic", "xdp-redirect"};
    return configs;
}

std::string smallpkt_config_label(const std::string& config) {
    static const std::map<std::string, std::string> labels{{"kernel", "kernel forwarding"},
                                                           {"nft-ct", "nftables conntrack"},
                                                           {"sluice-native", "sluice native XDP"},
                                                           {"sluice-tc", "sluice tc"},
                                                           {"sluice-generic", "sluice generic XDP"},
                                                           {"xdp-redirect", "minimal XDP redirect"}};
    auto it = labels.find(config);
    return it == labels.end() ? config : it->second;
}

std::string sluice_mode_of(const std::string& config) {
    const std::string prefix = "sluice-";
    return config.rfind(prefix, 0) == 0 ? config.substr(prefix.size()) : "";
}

Result<std::vector<std::string>> parse_configs(const std::string& text) {
    return parse_name_list(text, smallpkt_configs(), "configuration");
}

Result<std::map<std::string, std::string>> sluice_modes_of(const std::string& show_zones_json) {
    auto doc = nlohmann::json::parse(show_zones_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("zones") || !doc["zones"].is_array())
        return make_error("`sluice show zones --json` printed no \"zones\" list: " + show_zones_json.substr(0, 200));
    std::map<std::string, std::string> modes;
    for (const auto& zone : doc["zones"])
        for (const auto& itf : zone.value("interfaces", nlohmann::json::array()))
            if (itf.is_object() && itf.contains("xdp_mode") && itf["xdp_mode"].is_string())
                modes[itf.value("name", "?")] = itf["xdp_mode"].get<std::string>();
    return modes;
}

Status check_sluice_modes(const std::string& mode, const std::map<std::string, std::string>& modes,
                          const std::vector<std::string>& interfaces) {
    for (const auto& itf : interfaces) {
        auto it = modes.find(itf);
        if (it == modes.end())
            return make_error("sluice show zones lists no attached interface " + itf +
                              ": the measurement would not go through sluice");
        if (it->second != mode)
            return make_error("sluice runs " + itf + " in the " + it->second + " mode, not " + mode +
                              " (`sluice show zones` says why): the measurement would not be the mode it names");
    }
    return {};
}

Result<std::string> native_xdp_program(const std::string& ip_json, const std::string& dev) {
    auto doc = nlohmann::json::parse(ip_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_array()) return make_error("`ip -j link show` printed no list of links");
    for (const auto& link : doc) {
        if (!link.is_object() || link.value("ifname", "") != dev) continue;
        if (!link.contains("xdp") || !link["xdp"].is_object()) return make_error("no XDP program on " + dev);
        const auto& xdp = link["xdp"];
        // XDP_ATTACHED_DRV is 1 (linux/if_link.h); generic is 2, offloaded 3.
        const int mode = xdp.value("mode", 0);
        const std::string name = xdp.contains("prog") ? xdp["prog"].value("name", "") : "";
        if (mode != 1)
            return make_error("the XDP program " + (name.empty() ? std::string("?") : name) + " on " + dev +
                              " is not attached natively (mode " + std::to_string(mode) + ")");
        return name;
    }
    return make_error("no link " + dev + " in `ip -j link show` output");
}

Status check_forwarded(const std::string& what, uint64_t forwarded, uint64_t received) {
    if (received == 0) return make_error(what + ": nothing arrived at the receiver");
    // The firewall's counter is read just outside the receiver's window, so
    // it counts at least what arrived; 1 % leaves room for the odd frame
    // that was not one of the benchmark's.
    if (static_cast<double>(forwarded) < 0.99 * static_cast<double>(received))
        return make_error(what + " moved by " + std::to_string(forwarded) + " while the receiver counted " +
                          std::to_string(received) + ": the traffic did not go through it");
    return {};
}

}  // namespace sluice::bench
