#include "cli/show.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <unistd.h>

#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/control_client.h"
#include "cli/pinned_map.h"
#include "cli/session_table_fill.h"
#include "cli/show_filters.h"
#include "cli/show_host_inbound.h"
#include "cli/show_screens.h"
#include "cli/show_egress.h"
#include "cli/show_metrics.h"
#include "cli/show_inspect.h"
#include "cli/show_nat.h"
#include "daemon/state_file.h"
#include "loader/instance_paths.h"
#include "loader/map_io.h"
#include "loader/session_table.h"
#include "loader/stat_names.h"

namespace sluice::cli {
namespace {

using nlohmann::json;

template <typename Item>
std::string name_by_id(const std::vector<Item>& list, uint64_t id, const std::string& fallback) {
    for (const auto& item : list)
        if (item.id == id) return item.name;
    return fallback;
}

int show_sessions(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
                  std::ostream& err) {
    auto entries = read_pinned_sessions(paths.pin_dir);
    if (!entries) {
        err << "sluice: " << entries.error().message << "\n";
        return 1;
    }
    std::map<SessionKeyBytes, const SessionEntry*> by_key;
    auto key_of = [](const SessionEntry& e) { return key_bytes(e); };
    for (const auto& e : entries.value()) by_key[key_of(e)] = &e;

    uint64_t now = coarse_now_ns();
    json flows = json::array();
    std::vector<std::string> flow_texts;
    for (const auto& e : entries.value()) {
        const SessionEntry* reply = nullptr;
        if (auto it = by_key.find(key_of(reverse_of(e))); it != by_key.end()) reply = it->second;
        if ((e.value.flags & SESSION_F_REPLY) && reply) continue;  // listed with its initiator
        uint64_t last = e.value.last_seen_ns;
        if (reply && reply->value.last_seen_ns > last) last = reply->value.last_seen_ns;
        json f = {
            {"family", e.family == SLUICE_FAMILY_IPV4 ? "ipv4" : "ipv6"},
            {"protocol", protocol_name(e.protocol)},
            {"source", address_text(e.family, e.src_addr)},
            {"destination", address_text(e.family, e.dst_addr)},
            {"source_port", ntohs(e.src_port)},
            {"destination_port", ntohs(e.dst_port)},
            {"state", e.protocol == IPPROTO_TCP ? tcp_state_name(e.value.tcp_state) : "active"},
            {"policy_id", e.value.policy_id},
            {"policy", e.value.policy_id == SESSION_POLICY_RELATED
                           ? "-"
                           : name_by_id(state.policies, e.value.policy_id, "?")},
            {"from_zone", name_by_id(state.zones, e.value.zone_in, "-")},
            {"to_zone", name_by_id(state.zones, e.value.zone_out, "-")},
            {"packets_forward", e.value.packets},
            {"bytes_forward", e.value.bytes},
            {"packets_reply", reply ? reply->value.packets : 0},
            {"bytes_reply", reply ? reply->value.bytes : 0},
            {"age_seconds", now > e.value.created_ns ? seconds(now - e.value.created_ns) : 0.0},
            {"idle_seconds", now > last ? seconds(now - last) : 0.0},
            {"fib_cached", e.value.fib.generation != 0},
        };
        if (json nat = session_nat_json(e); !nat.is_null()) f["nat"] = nat;
        // Inspected flows: with the stage, being handed back, or handed back
        // (a TCP connection past inspect-bytes the fast path now renumbers).
        if (e.value.punt_flags & SESSION_PUNT_SPLICED) f["inspection"] = "handed-back";
        else if (e.value.punt_flags & SESSION_PUNT_INSPECT)
            f["inspection"] = (e.value.punt_flags & SESSION_PUNT_HOLD) ? "handing-back" : "stage";
        flows.push_back(f);
        flow_texts.push_back(endpoint_text(e.family, e.src_addr, e.src_port) + " > " +
                             endpoint_text(e.family, e.dst_addr, e.dst_port));
    }
    auto fill = session_table_fill(paths.pin_dir, entries.value());
    if (!fill) {
        err << "sluice: " << fill.error().message << "\n";
        return 1;
    }
    if (json_out) {
        out << json{{"sessions", flows}, {"table", session_table_fill_json(fill.value())}}.dump(2) << "\n";
        return 0;
    }
    out << std::left << std::setw(7) << "PROTO" << std::setw(48) << "FLOW" << std::setw(13) << "STATE"
        << std::setw(20) << "POLICY" << std::setw(20) << "ZONES" << std::right << std::setw(10) << "PKTS>"
        << std::setw(10) << "PKTS<" << std::setw(8) << "IDLE" << "  NAT\n";
    for (size_t i = 0; i < flows.size(); ++i) {
        const json& f = flows[i];
        std::ostringstream idle;
        idle << std::fixed << std::setprecision(1) << f["idle_seconds"].get<double>() << "s";
        out << std::left << std::setw(7) << f["protocol"].get<std::string>() << std::setw(48) << flow_texts[i]
            << std::setw(13) << f["state"].get<std::string>() << std::setw(20) << f["policy"].get<std::string>()
            << std::setw(20)
            << (f["from_zone"].get<std::string>() + ">" + f["to_zone"].get<std::string>()) << std::right
            << std::setw(10) << f["packets_forward"].get<uint64_t>() << std::setw(10)
            << f["packets_reply"].get<uint64_t>() << std::setw(8) << idle.str();
        if (f.contains("nat")) {
            if (f["nat"].contains("src")) out << "  src " << f["nat"]["src"].get<std::string>();
            if (f["nat"].contains("dst")) out << "  dst " << f["nat"]["dst"].get<std::string>();
        }
        out << "\n";
    }
    out << flows.size() << " session(s); " << session_table_fill_text(fill.value()) << "\n";
    return 0;
}

// The HA agent's state when the instance runs one (docs/ha.md), else null:
// `show stats` carries the role and sync counters next to the datapath's.
json ha_state(const InstancePaths& paths) {
    auto reply = cli::call_daemon(control::socket_path(paths.state_dir),
                                  control::Request{.command = control::Command::ha_status, .argument = ""},
                                  std::chrono::seconds(2));
    if (!reply || !reply->ok) return nullptr;
    json s = json::parse(reply->state, nullptr, false);
    return s.is_discarded() ? json(nullptr) : s;
}

std::string ha_line(const json& s) {
    std::ostringstream o;
    o << "ha: node " << s.at("node").get<std::string>() << ":";
    for (const auto& g : s.at("groups")) o << " " << g.at("name").get<std::string>() << " " << g.at("role").get<std::string>();
    const auto& y = s.at("sync");
    o << "; peer " << s.at("peer").at("name").get<std::string>() << (s.at("peer").at("alive").get<bool>() ? " alive" : " SILENT")
      << "; sync sent " << y.at("flows_sent") << " flows, " << y.at("deletes_sent") << " deletes, received "
      << y.at("flows_received") << " flows (" << y.at("flows_written") << " written); `sluice ha status` for more";
    return o.str();
}

int show_stats(const InstancePaths& paths, bool json_out, std::ostream& out, std::ostream& err) {
    PinnedMap stats(paths.pin_dir + "/" SLUICE_MAP_STATS);
    if (stats.fd() < 0) {
        err << "sluice: no pinned counters under " << paths.pin_dir << "\n";
        return 1;
    }
    auto totals = read_stat_counters(stats.fd());
    if (!totals) {
        err << "sluice: " << totals.error().message << "\n";
        return 1;
    }
    // drop-session-table-full means more to the reader next to how full the
    // table is and what it holds.
    auto sessions = read_pinned_sessions(paths.pin_dir);
    if (!sessions) {
        err << "sluice: " << sessions.error().message << "\n";
        return 1;
    }
    auto fill = session_table_fill(paths.pin_dir, sessions.value());
    if (!fill) {
        err << "sluice: " << fill.error().message << "\n";
        return 1;
    }
    if (json_out) {
        json counters = json::object(), bytes = json::object(), kinds = json::object();
        for (int i = 0; i < STAT_REASON_COUNT; ++i) {
            const std::string name(stat_info(i).name);
            counters[name] = totals.value()[i].packets;
            if (stat_counts_bytes(i)) bytes[name] = totals.value()[i].bytes;
            kinds[name] = stat_info(i).kind;
        }
        out << json{{"counters", counters},
                    {"bytes", bytes},
                    {"kinds", kinds},
                    {"session_table", session_table_fill_json(fill.value())},
                    {"ha", ha_state(paths)}}
                   .dump(2)
            << "\n";
        return 0;
    }
    for (int i = 0; i < STAT_REASON_COUNT; ++i) {
        out << std::left << std::setw(34) << stat_info(i).name << std::setw(6) << stat_info(i).kind << std::right
            << std::setw(14) << totals.value()[i].packets;
        if (stat_counts_bytes(i)) out << std::setw(16) << totals.value()[i].bytes << " bytes";
        out << "\n";
    }
    out << session_table_fill_text(fill.value()) << "\n";
    if (json ha = ha_state(paths); !ha.is_null()) out << ha_line(ha) << "\n";
    return 0;
}

int show_zones(const state::PublishedState& state, bool json_out, std::ostream& out) {
    json zones = json::array();
    for (const auto& z : state.zones) {
        std::vector<state::Interface> itfs;
        for (const auto& i : state.interfaces)
            if (i.zone_id == z.id) itfs.push_back(i);
        zones.push_back({{"name", z.name}, {"id", z.id}, {"interfaces", itfs}});
        if (json_out) continue;
        out << z.name << " (id " << z.id << "):";
        for (const auto& i : itfs) out << " " << i.name << " [" << (i.device.empty() ? "detached" : i.xdp_mode) << "]";
        out << "\n";
        for (const auto& i : itfs) {
            if (i.device.empty()) continue;
            out << "  " << i.name << ": " << i.xdp_mode << " (" << i.xdp_mode_why << ")\n";
            if (!i.warning.empty()) out << "  " << i.name << ": warning: " << i.warning << "\n";
        }
    }
    if (json_out) out << json{{"zones", zones}}.dump(2) << "\n";
    return 0;
}

int show_policies(const state::PublishedState& state, bool json_out, std::ostream& out) {
    if (json_out) {
        out << json{{"policies", state.policies}, {"default_action", state.default_action}}.dump(2) << "\n";
        return 0;
    }
    auto field = [](const std::vector<std::string>& items) {
        if (items.empty()) return std::string("any");
        std::string joined;
        for (const auto& item : items) joined += (joined.empty() ? "" : ",") + item;
        return joined;
    };
    out << std::setw(4) << "ID" << "  " << std::left << std::setw(20) << "NAME" << std::setw(22) << "ZONES"
        << std::setw(24) << "SOURCE" << std::setw(24) << "DESTINATION" << std::setw(18) << "APPLICATION"
        << "ACTION" << std::right << "\n";
    for (const auto& p : state.policies) {
        out << std::setw(4) << p.id << "  " << std::left << std::setw(20) << p.name << std::setw(22)
            << (p.from + " -> " + p.to) << std::setw(24) << field(p.source) << std::setw(24) << field(p.destination)
            << std::setw(18) << field(p.application) << p.action;
        if (!p.ruleset.empty()) out << ' ' << p.ruleset;
        out << std::right << "\n";
    }
    out << "default: " << state.default_action << "\n";
    return 0;
}

}  // namespace

int show(const std::string& what, const std::string& instance, bool json_out, std::ostream& out, std::ostream& err) {
    if (auto s = prepare_bpffs(); !s) {
        err << "sluice: " << s.error().message << "\n";
        return 1;
    }
    InstancePaths paths = instance_paths(instance);
    // Without a daemon the state file may be gone: sessions, stats, NAT and
    // inspection counters still come from the pins.
    auto read = read_state(paths.state_file());
    if (!read && read.error().code != ErrorCode::NotFound) {
        err << "sluice: " << read.error().message << "\n";
        return 1;
    }
    const bool have_state = read.ok();
    const state::PublishedState state = have_state ? read.value() : state::PublishedState{};
    if (what == "sessions") return show_sessions(paths, state, json_out, out, err);
    if (what == "stats") return show_stats(paths, json_out, out, err);
    if (what == "egress") return show_egress(instance, json_out, out, err);
    if (what == "metrics") return show_metrics(instance, json_out, out, err);
    // Rules and pools come from the state file; without it the maps still tell
    // the interface addresses and the live translations.
    if (what == "nat") return show_nat(paths, state, json_out, out, err);
    if (!have_state) {
        err << "sluice: instance " << instance << " is not running (no " << paths.state_file() << ")\n";
        return 1;
    }
    if (what == "inspect") return show_inspect(paths, state, json_out, out);
    if (what == "zones") return show_zones(state, json_out, out);
    if (what == "policies") return show_policies(state, json_out, out);
    if (what == "filters") return show_filters(paths, state, json_out, out, err);
    if (what == "host-inbound") return show_host_inbound(paths, state, json_out, out, err);
    if (what == "screens") return show_screens(paths, state, json_out, out, err);
    err << "sluice: unknown show target " << what << "\n";
    return 1;
}

}  // namespace sluice::cli
