#include "daemon/state_publisher.h"

#include <unistd.h>

#include <filesystem>

#include "daemon/host_inbound_state.h"
#include "daemon/nat_state.h"
#include "daemon/screen_state.h"
#include "loader/map_io.h"

namespace sluice {

nlohmann::json published_state(const StateSources& in) {
    nlohmann::json state;
    state["instance"] = in.instance;
    state["pid"] = getpid();
    state["config"] = std::filesystem::absolute(in.config_path).string();
    state["pin_dir"] = in.pin_dir;
    runtime_config cfg{};
    if (read_runtime_config(in.datapath.map_fd("runtime_cfg"), cfg)) state["config_generation"] = cfg.config_generation;
    state["reloads"] = in.reloads;
    state["last_reload"] = in.last_reload;
    auto& itfs = state["interfaces"] = nlohmann::json::array();
    for (const auto& itf : in.applied.interfaces) {
        std::string device = itf.parent.empty() ? itf.name : itf.parent;
        nlohmann::json j = {{"name", itf.name}, {"zone_id", itf.zone_id}, {"vlan_id", itf.vlan_id},
                            {"xdp_mode_requested", itf.xdp_mode}};
        if (auto a = in.attachments.devices().find(device); a != in.attachments.devices().end()) {
            j["device"] = device;
            j["ifindex"] = a->second.itf.ifindex;
            j["xdp_mode"] = xdp_mode_name(a->second.mode);
            if (!a->second.warning.empty()) j["warning"] = a->second.warning;
        }
        itfs.push_back(j);
    }
    auto& zones = state["zones"] = nlohmann::json::array();
    for (const auto& z : in.applied.zones) zones.push_back({{"name", z.name}, {"id", z.id}});
    auto& policies = state["policies"] = nlohmann::json::array();
    for (const auto& p : in.applied.policies) {
        static const char* actions[] = {"deny", "permit", "reject", "inspect"};
        nlohmann::json j = {{"name", p.name}, {"id", p.id}, {"from", p.from_zone}, {"to", p.to_zone},
                            {"action", actions[p.action & 3]}};
        if (!p.ruleset.empty()) j["ruleset"] = p.ruleset;
        j["source"] = p.sources.empty() ? nlohmann::json("any") : nlohmann::json(p.sources);
        j["destination"] = p.destinations.empty() ? nlohmann::json("any") : nlohmann::json(p.destinations);
        j["application"] = p.applications.empty() ? nlohmann::json("any") : nlohmann::json(p.applications);
        policies.push_back(j);
    }
    auto& filters = state["filters"] = nlohmann::json::array();
    for (const auto& f : in.applied.filters) {
        nlohmann::json rules = nlohmann::json::array();
        for (const auto& r : f.rules) rules.push_back({{"name", r.name}, {"action", r.action}, {"slot", r.slot}});
        filters.push_back({{"name", f.name}, {"id", f.id}, {"interfaces", f.interfaces}, {"rules", rules}});
    }
    const auto& t = in.applied.tables;
    state["classifier"] = {{"rules", t.rule_count},
                           {"groups", t.groups.size()},
                           {"cross_entries", t.cross.size()},
                           {"sparse_entries", t.sparse.size()},
                           {"results", t.results.size() - 1},
                           {"map_bytes", t.map_bytes}};
    state["nat"] = nat_state_json(in.nat.nat());
    state["host_inbound"] = host_inbound_state_json(in.applied.host_inbound);
    state["screens"] = screen_state_json(in.applied.zones, in.applied.screens);
    state["inspect"] = in.inspection.state_json();
    state["default_action"] = in.applied.default_action == POLICY_ACTION_PERMIT ? "permit"
                              : in.applied.default_action == POLICY_ACTION_REJECT ? "reject"
                                                                                : "deny";
    return state;
}

}  // namespace sluice
