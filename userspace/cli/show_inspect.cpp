#include "cli/show_inspect.h"

#include <iomanip>

#include "cli/pinned_map.h"
#include "daemon/state_file.h"
#include "loader/map_io.h"

namespace sluice::cli {
namespace {

using nlohmann::json;
using inspect::Counter;

json fast_path_json(const punt_ruleset_stats& s) {
    return {{"punted_packets", s.punted_packets},         {"punted_bytes", s.punted_bytes},
            {"fail_open_packets", s.fail_open_packets},   {"fail_closed_packets", s.fail_closed_packets},
            {"no_socket_packets", s.no_socket_packets},   {"verdict_drop_packets", s.verdict_packets}};
}

const inspect::SlotSnapshot* find_slot(const std::optional<inspect::CounterSnapshot>& c, const std::string& ruleset,
                                       const std::string& pattern) {
    if (!c) return nullptr;
    for (const auto& slot : c->slots)
        if (!slot.overflow && slot.ruleset == ruleset && slot.pattern == pattern) return &slot;
    return nullptr;
}

}  // namespace

json inspect_report(const InspectReportInput& in) {
    const state::Inspect& inspect = in.inspect;
    json report;
    json stage = {{"running", inspect.running && in.daemon_alive},
                  {"held_by_operator", inspect.held_by_operator},
                  {"datapath_sees_stage_up", in.stage_up_in_datapath},
                  {"overloaded", in.overloaded}};
    if (inspect.running) {
        stage["workers"] = inspect.workers;
        stage["tcp_port"] = inspect.tcp_port;
        stage["udp_port"] = inspect.udp_port;
    }
    if (in.counters) {
        stage["counters_owner_pid"] = in.counters->owner_pid;
        stage["counter_names_overflowed"] = in.counters->overflow_names;
    }
    report["stage"] = stage;
    json rulesets = json::array();
    for (const auto& r : inspect.rulesets) {
        const std::string& name = r.name;
        const uint16_t id = r.id;
        json rj = {{"name", name},
                   {"id", id},
                   {"fail_mode", r.fail_mode},
                   {"inspect_bytes", r.inspect_bytes ? json(*r.inspect_bytes) : json("unlimited")}};
        auto fp = in.fast_path.find(id);
        rj["fast_path"] = fast_path_json(fp != in.fast_path.end() ? fp->second : punt_ruleset_stats{});
        json sj = json::object();
        const inspect::SlotSnapshot* slot = find_slot(in.counters, name, "");
        for (size_t c = 0; c < inspect::kCounterCount; ++c)
            sj[inspect::to_string(static_cast<Counter>(c))] = slot ? slot->counters[c] : 0;
        rj["stage"] = sj;
        json patterns = json::array();
        for (const auto& p : r.patterns) {
            json pj = p;
            const inspect::SlotSnapshot* ps = find_slot(in.counters, name, p.name);
            pj["matches"] = ps ? (*ps)[Counter::matches] : 0;
            patterns.push_back(pj);
        }
        rj["patterns"] = patterns;
        rulesets.push_back(rj);
    }
    report["rulesets"] = rulesets;
    return report;
}

void print_inspect_report(const json& report, std::ostream& out) {
    const json& stage = report["stage"];
    out << "inspection stage: " << (stage.value("running", false) ? "running" : "not running");
    if (stage.value("held_by_operator", false)) out << " (stopped by `sluice inspect stop`)";
    if (stage.contains("workers")) out << ", " << stage["workers"] << " workers";
    if (stage.value("overloaded", false)) out << ", OVERLOADED (new punted flows get their fail-mode)";
    out << "\n";
    for (const auto& r : report["rulesets"]) {
        const json& fp = r["fast_path"];
        const json& st = r["stage"];
        out << "\nruleset " << r.value("name", "") << " (id " << r["id"] << ", fail-mode " << r.value("fail_mode", "")
            << ", inspect-bytes " << (r["inspect_bytes"].is_string() ? r["inspect_bytes"].get<std::string>()
                                                                       : std::to_string(r["inspect_bytes"].get<uint64_t>()))
            << ")\n";
        out << "  fast path: " << fp["punted_packets"] << " packets punted (" << fp["punted_bytes"] << " bytes), "
            << fp["fail_open_packets"] << " failed open, " << fp["fail_closed_packets"] << " failed closed, "
            << fp["no_socket_packets"] << " without a stage socket, " << fp["verdict_drop_packets"]
            << " dropped by verdict\n";
        out << "  stage: " << st["connections"] << " connections, " << st["datagrams"] << " datagrams, "
            << st["bytes_client_to_server"] << " B client→server, " << st["bytes_server_to_client"]
            << " B server→client; " << st["matches"] << " matched, " << st["resets"] << " reset, " << st["drops"]
            << " dropped, " << st["alerts"] << " alerts, " << st["offloaded"] << " directions offloaded, "
            << st["handoffs"] << " TCP handed to the fast path (" << st["handoff_refused"] << " refused), "
            << st["stage_errors"] << " errors\n";
        out << "  " << std::left << std::setw(24) << "pattern" << std::setw(18) << "direction" << std::setw(8)
            << "action" << std::right << std::setw(10) << "matches" << "  regex\n";
        for (const auto& p : r["patterns"]) {
            out << "  " << std::left << std::setw(24) << p.value("name", "") << std::setw(18)
                << p.value("direction", "") << std::setw(8) << p.value("action", "") << std::right << std::setw(10)
                << p.value("matches", uint64_t{0}) << "  " << p.value("regex", "") << (p.value("caseless", false) ? " (caseless)" : "")
                << "\n";
        }
    }
}

int show_inspect(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out) {
    InspectReportInput in;
    in.inspect = state.inspect;
    in.daemon_alive = process_alive(state.pid);
    auto counters = inspect::read_counter_table(state.inspect.counters.empty() ? paths.inspect_counters_file()
                                                                               : state.inspect.counters);
    if (counters) in.counters = std::move(counters.value());
    PinnedMap stats(paths.pin_dir + "/" SLUICE_MAP_PUNT_STATS);
    if (stats.fd() >= 0) {
        for (const auto& r : state.inspect.rulesets) {
            const uint16_t id = r.id;
            auto words = read_percpu_words(stats.fd(), id, sizeof(punt_ruleset_stats) / sizeof(uint64_t));
            if (!words) continue;
            punt_ruleset_stats s{};
            std::memcpy(&s, words->data(), sizeof(s));
            in.fast_path[id] = s;
        }
    }
    PinnedMap cfg(paths.pin_dir + "/" SLUICE_MAP_PUNT_CFG);
    punt_config pc{};
    uint32_t key = 0;
    if (cfg.fd() >= 0 && bpf_map_lookup_elem(cfg.fd(), &key, &pc) == 0) {
        in.stage_up_in_datapath = pc.stage_up != 0;
        in.overloaded = pc.overloaded != 0;
    }
    json report = inspect_report(in);
    if (json_out) out << report.dump(2) << "\n";
    else print_inspect_report(report, out);
    return 0;
}

}  // namespace sluice::cli
