#include "cli/show_filters.h"

#include <iomanip>

#include "cli/pinned_map.h"
#include "loader/map_io.h"

extern "C" {
#include "map_names.h"
}

namespace sluice::cli {

using nlohmann::json;

int show_filters(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
                 std::ostream& err) {
    PinnedMap hits(paths.pin_dir + "/" SLUICE_MAP_FILTER_HITS);
    PinnedMap cfg_map(paths.pin_dir + "/" SLUICE_MAP_RUNTIME_CONFIG);
    if (hits.fd() < 0 || cfg_map.fd() < 0) {
        err << "sluice: no pinned filter counters under " << paths.pin_dir << "\n";
        return 1;
    }
    runtime_config cfg{};
    if (auto r = read_runtime_config(cfg_map.fd(), cfg); !r) {
        err << "sluice: " << r.error().message << "\n";
        return 1;
    }
    const uint32_t base = uint32_t(cfg.policy_generation & 1) * FILTER_MAX_RULES;
    json filters = json::array();
    for (const auto& f : state.filters) {
        json rules = json::array();
        for (const auto& r : f.rules) {
            auto words = read_percpu_words(hits.fd(), base + r.slot, 2);
            if (!words) {
                err << "sluice: " << words.error().message << "\n";
                return 1;
            }
            rules.push_back({{"name", r.name},
                             {"action", r.action},
                             {"packets", words.value()[0]},
                             {"bytes", words.value()[1]}});
        }
        filters.push_back({{"name", f.name}, {"interfaces", f.interfaces}, {"rules", rules}});
    }
    if (json_out) {
        out << json{{"filters", filters}}.dump(2) << "\n";
        return 0;
    }
    if (filters.empty()) out << "no filters\n";
    for (const auto& f : filters) {
        out << "filter " << f["name"].get<std::string>() << " (on";
        if (f["interfaces"].empty()) out << " no interface";
        for (const auto& i : f["interfaces"]) out << " " << i.get<std::string>();
        out << "):\n";
        out << "  " << std::left << std::setw(24) << "RULE" << std::setw(8) << "ACTION" << std::right
            << std::setw(16) << "PACKETS" << std::setw(18) << "BYTES" << "\n";
        for (const auto& r : f["rules"])
            out << "  " << std::left << std::setw(24) << r["name"].get<std::string>() << std::setw(8)
                << r["action"].get<std::string>() << std::right << std::setw(16) << r["packets"].get<uint64_t>()
                << std::setw(18) << r["bytes"].get<uint64_t>() << "\n";
    }
    return 0;
}

}  // namespace sluice::cli
