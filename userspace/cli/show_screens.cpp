#include "cli/show_screens.h"

#include <iomanip>

#include "cli/pinned_map.h"
#include "loader/map_io.h"

extern "C" {
#include "map_names.h"
#include "screen.h"
}

namespace sluice::cli {

using nlohmann::json;

namespace {

std::string syn_proxy_text(const json& j) {
    if (j.is_string()) return j.get<std::string>();
    if (j.is_object() && j.contains("above")) return "above " + std::to_string(j["above"].get<uint64_t>()) + " SYN/s";
    return "?";
}

// "30 ports or 50 hosts in 1s, block 60s"
std::string scan_text(const json& scan) {
    std::string text;
    if (scan.contains("ports")) text += std::to_string(scan["ports"].get<uint32_t>()) + " ports";
    if (scan.contains("hosts"))
        text += (text.empty() ? "" : " or ") + std::to_string(scan["hosts"].get<uint32_t>()) + " hosts";
    text += " in " + std::to_string(scan.value("window_seconds", 0u)) + "s, " + scan.value("action", "?");
    if (scan.contains("hold_seconds")) text += " " + std::to_string(scan["hold_seconds"].get<uint32_t>()) + "s";
    return text;
}

}  // namespace

int show_screens(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
                 std::ostream& err) {
    PinnedMap hits(paths.pin_dir + "/" SLUICE_MAP_SCREEN_HITS);
    PinnedMap cfg_map(paths.pin_dir + "/" SLUICE_MAP_RUNTIME_CONFIG);
    if (hits.fd() < 0 || cfg_map.fd() < 0) {
        err << "sluice: no pinned screen counters under " << paths.pin_dir << "\n";
        return 1;
    }
    runtime_config cfg{};
    if (auto r = read_runtime_config(cfg_map.fd(), cfg); !r) {
        err << "sluice: " << r.error().message << "\n";
        return 1;
    }
    const uint32_t base = uint32_t(cfg.policy_generation & 1) * SLUICE_MAX_ZONES;
    json zones = json::array();
    for (const auto& screen : state.screens) {
        const json z = screen;  // the configured screens as the state file writes them
        auto words = read_percpu_words(hits.fd(), base + screen.id, sizeof(screen_counter) / 8);
        if (!words) {
            err << "sluice: " << words.error().message << "\n";
            return 1;
        }
        const auto& w = words.value();
        zones.push_back({{"zone", screen.zone},
                         {"syn_proxy", z["syn_proxy"]},
                         {"counters",
                          {{"syn_proxy_cookies_sent", w[0]},
                           {"syn_proxy_cookies_valid", w[1]},
                           {"syn_proxy_cookies_invalid", w[2]},
                           {"syn_proxy_server_syns", w[3]},
                           {"syn_proxy_established", w[4]},
                           {"source_rate_drops", w[5]},
                           {"source_session_drops", w[6]},
                           {"destination_rate_drops", w[7]},
                           {"source_icmp_drops", w[8]},
                           {"source_udp_drops", w[9]},
                           {"destination_icmp_drops", w[10]},
                           {"destination_udp_drops", w[11]},
                           {"scans_detected", w[12]},
                           {"scan_drops", w[13]},
                           {"syn_proxy_refused", w[14]}}}});
        for (const char* limit : {"source_sessions", "source_new_sessions_per_second",
                                  "destination_new_sessions_per_second", "source_icmp_packets_per_second",
                                  "source_udp_packets_per_second", "destination_icmp_packets_per_second",
                                  "destination_udp_packets_per_second", "scan"})
            if (z.contains(limit)) zones.back()[limit] = z[limit];
    }
    if (json_out) {
        out << json{{"zones", zones}}.dump(2) << "\n";
        return 0;
    }
    for (const auto& z : zones) {
        out << "zone " << z["zone"].get<std::string>() << ": syn-proxy " << syn_proxy_text(z["syn_proxy"]);
        if (z.contains("source_sessions")) out << ", " << z["source_sessions"] << " sessions per source";
        if (z.contains("source_new_sessions_per_second"))
            out << ", " << z["source_new_sessions_per_second"] << " new sessions/s per source";
        if (z.contains("destination_new_sessions_per_second"))
            out << ", " << z["destination_new_sessions_per_second"] << " new sessions/s per destination";
        for (const auto& [key, text] : {std::pair<const char*, const char*>{"source_icmp_packets_per_second",
                                                                             " ICMP packets/s per source"},
                                        {"source_udp_packets_per_second", " UDP packets/s per source"},
                                        {"destination_icmp_packets_per_second", " ICMP packets/s per destination"},
                                        {"destination_udp_packets_per_second", " UDP packets/s per destination"}})
            if (z.contains(key)) out << ", " << z[key] << text;
        if (z.contains("scan")) out << ", scan " << scan_text(z["scan"]);
        out << "\n";
        for (const auto& [name, value] : z["counters"].items())
            out << "  " << std::left << std::setw(30) << name << std::right << std::setw(14) << value.get<uint64_t>()
                << "\n";
    }
    return 0;
}

}  // namespace sluice::cli
