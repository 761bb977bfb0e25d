#include "cli/show_host_inbound.h"

#include <algorithm>
#include <iomanip>
#include <map>

#include "cli/pinned_map.h"
#include "loader/host_inbound_tables.h"
#include "loader/map_io.h"

extern "C" {
#include "map_names.h"
}

namespace sluice::cli {

using nlohmann::json;

namespace {

// "yes" (the zone's list), "default" (built in: replies, related errors,
// fragments), "no".
std::string allowed_text(bool listed, bool all, uint32_t id) {
    if (listed) return "yes";
    if (id == HOST_SVC_REPLY || id == HOST_SVC_ICMP_ERROR || id == HOST_SVC_FRAGMENT) return "default";
    return all ? "yes (all)" : "no";
}

}  // namespace

int show_host_inbound(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
                      std::ostream& err) {
    PinnedMap hits(paths.pin_dir + "/" SLUICE_MAP_HOST_HITS);
    PinnedMap cfg_map(paths.pin_dir + "/" SLUICE_MAP_RUNTIME_CONFIG);
    if (hits.fd() < 0 || cfg_map.fd() < 0) {
        err << "sluice: no pinned host-inbound counters under " << paths.pin_dir << "\n";
        return 1;
    }
    runtime_config cfg{};
    if (auto r = read_runtime_config(cfg_map.fd(), cfg); !r) {
        err << "sluice: " << r.error().message << "\n";
        return 1;
    }
    std::map<uint32_t, std::string> names;
    for (const auto& s : state.host_inbound.services) names[s.id] = s.name;

    json zones = json::array();
    uint64_t total_accepted = 0, total_dropped = 0;
    for (const auto& z : state.host_inbound.zones) {
        const uint16_t zone_id = z.id;
        const bool all = z.all;
        const std::vector<uint32_t>& listed = z.services;
        json allows = json::array();
        for (uint32_t id : listed) allows.push_back(names.count(id) ? names[id] : "?");
        if (all) allows.push_back("all");
        json rows = json::array();
        for (const auto& [id, name] : names) {
            auto words = read_percpu_words(hits.fd(), host_hits_index(cfg.policy_generation & 1, zone_id, id), 2);
            if (!words) {
                err << "sluice: " << words.error().message << "\n";
                return 1;
            }
            const uint64_t accepted = words.value()[0], dropped = words.value()[1];
            const bool is_listed = std::find(listed.begin(), listed.end(), id) != listed.end();
            total_accepted += accepted;
            total_dropped += dropped;
            // Every allowed service, the built-in replies, and whatever moved.
            if (!is_listed && id != HOST_SVC_REPLY && accepted == 0 && dropped == 0) continue;
            rows.push_back({{"service", name},
                            {"allowed", allowed_text(is_listed, all, id)},
                            {"accepted", accepted},
                            {"dropped", dropped}});
        }
        zones.push_back({{"zone", z.name}, {"id", zone_id}, {"allows", allows}, {"services", rows}});
    }
    if (json_out) {
        out << json{{"zones", zones}, {"accepted", total_accepted}, {"dropped", total_dropped}}.dump(2) << "\n";
        return 0;
    }
    for (const auto& z : zones) {
        std::string allows;
        for (const auto& a : z["allows"]) allows += (allows.empty() ? "" : ", ") + a.get<std::string>();
        out << "zone " << z["zone"].get<std::string>() << " (allows: " << (allows.empty() ? "nothing" : allows)
            << ")\n";
        out << "  " << std::left << std::setw(20) << "SERVICE" << std::setw(11) << "ALLOWED" << std::right
            << std::setw(14) << "ACCEPTED" << std::setw(14) << "DROPPED" << "\n";
        for (const auto& r : z["services"])
            out << "  " << std::left << std::setw(20) << r["service"].get<std::string>() << std::setw(11)
                << r["allowed"].get<std::string>() << std::right << std::setw(14) << r["accepted"].get<uint64_t>()
                << std::setw(14) << r["dropped"].get<uint64_t>() << "\n";
    }
    out << "total: " << total_accepted << " accepted, " << total_dropped << " dropped\n";
    return 0;
}

}  // namespace sluice::cli
