#include "daemon/state_publisher.h"

#include <unistd.h>

#include <filesystem>

#include "daemon/host_inbound_state.h"
#include "daemon/nat_state.h"
#include "daemon/screen_state.h"
#include "loader/map_io.h"

namespace sluice {
namespace {

const char* action_name(uint8_t action) {
    static const char* actions[] = {"deny", "permit", "reject", "inspect"};
    return actions[action & 3];
}

}  // namespace

state::PublishedState published_state(const StateSources& in) {
    state::PublishedState out;
    out.instance = in.instance;
    out.pid = getpid();
    out.config = std::filesystem::absolute(in.config_path).string();
    out.pin_dir = in.pin_dir;
    runtime_config cfg{};
    if (read_runtime_config(in.datapath.map_fd("runtime_cfg"), cfg)) out.config_generation = cfg.config_generation;
    out.reloads = in.reloads;
    out.last_reload = in.last_reload;
    for (const auto& itf : in.applied.interfaces) {
        state::Interface i;
        i.name = itf.name;
        i.zone_id = itf.zone_id;
        i.vlan_id = itf.vlan_id;
        i.xdp_mode_requested = itf.xdp_mode;
        const std::string device = itf.parent.empty() ? itf.name : itf.parent;
        if (auto a = in.attachments.devices().find(device); a != in.attachments.devices().end()) {
            i.device = device;
            i.ifindex = a->second.itf.ifindex;
            i.xdp_mode = xdp_mode_name(a->second.mode);
            i.xdp_mode_why = a->second.why;
            i.warning = a->second.warning;
        }
        out.interfaces.push_back(std::move(i));
    }
    for (const auto& z : in.applied.zones) out.zones.push_back({z.name, z.id});
    for (const auto& p : in.applied.policies)
        out.policies.push_back({p.name, p.id, p.from_zone, p.to_zone, action_name(p.action), p.ruleset, p.sources,
                                p.destinations, p.applications});
    for (const auto& f : in.applied.filters) {
        state::Filter filter;
        filter.name = f.name;
        filter.id = f.id;
        filter.interfaces = f.interfaces;
        for (const auto& r : f.rules) filter.rules.push_back({r.name, r.action, r.slot});
        out.filters.push_back(std::move(filter));
    }
    const auto& t = in.applied.tables;
    out.classifier = {t.rule_count, t.groups.size(), t.cross.size(), t.sparse.size(), t.results.size() - 1,
                      t.map_bytes};
    out.nat = nat_state(in.nat.nat());
    out.host_inbound = host_inbound_state(in.applied.host_inbound);
    out.screens = screen_state(in.applied.zones, in.applied.screens);
    out.inspect = in.inspection.published();
    out.egress = in.egress.published();
    out.default_action = action_name(in.applied.default_action);
    return out;
}

}  // namespace sluice
