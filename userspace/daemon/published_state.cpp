#include "daemon/published_state.h"

namespace sluice::state {
namespace {

using nlohmann::json;

// A required field: a missing key throws (json::out_of_range names it).
template <typename T>
void read(const json& j, const char* key, T& field) {
    j.at(key).get_to(field);
}

// A field written only when set (non-zero, non-empty).
template <typename T>
void read_optional(const json& j, const char* key, T& field) {
    if (j.contains(key)) j.at(key).get_to(field);
}

// "any" or a list of names; empty = any.
json any_or_list(const std::vector<std::string>& items) { return items.empty() ? json("any") : json(items); }

std::vector<std::string> list_or_any(const json& j) {
    if (j.is_string() && j.get<std::string>() == "any") return {};
    return j.get<std::vector<std::string>>();
}

}  // namespace

void to_json(json& j, const Interface& v) {
    j = {{"name", v.name}, {"zone_id", v.zone_id}, {"vlan_id", v.vlan_id}, {"xdp_mode_requested", v.xdp_mode_requested}};
    if (!v.device.empty()) {
        j["device"] = v.device;
        j["ifindex"] = v.ifindex;
        j["xdp_mode"] = v.xdp_mode;
        j["xdp_mode_why"] = v.xdp_mode_why;
        if (!v.warning.empty()) j["warning"] = v.warning;
    }
}
void from_json(const json& j, Interface& v) {
    read(j, "name", v.name);
    read(j, "zone_id", v.zone_id);
    read(j, "vlan_id", v.vlan_id);
    read(j, "xdp_mode_requested", v.xdp_mode_requested);
    read_optional(j, "device", v.device);
    if (!v.device.empty()) {
        read(j, "ifindex", v.ifindex);
        read(j, "xdp_mode", v.xdp_mode);
        read_optional(j, "xdp_mode_why", v.xdp_mode_why);
        read_optional(j, "warning", v.warning);
    }
}

void to_json(json& j, const Zone& v) { j = {{"name", v.name}, {"id", v.id}}; }
void from_json(const json& j, Zone& v) {
    read(j, "name", v.name);
    read(j, "id", v.id);
}

void to_json(json& j, const Policy& v) {
    j = {{"name", v.name}, {"id", v.id}, {"from", v.from}, {"to", v.to}, {"action", v.action}};
    if (!v.ruleset.empty()) j["ruleset"] = v.ruleset;
    j["source"] = any_or_list(v.source);
    j["destination"] = any_or_list(v.destination);
    j["application"] = any_or_list(v.application);
}
void from_json(const json& j, Policy& v) {
    read(j, "name", v.name);
    read(j, "id", v.id);
    read(j, "from", v.from);
    read(j, "to", v.to);
    read(j, "action", v.action);
    read_optional(j, "ruleset", v.ruleset);
    v.source = list_or_any(j.at("source"));
    v.destination = list_or_any(j.at("destination"));
    v.application = list_or_any(j.at("application"));
}

void to_json(json& j, const FilterRule& v) { j = {{"name", v.name}, {"action", v.action}, {"slot", v.slot}}; }
void from_json(const json& j, FilterRule& v) {
    read(j, "name", v.name);
    read(j, "action", v.action);
    read(j, "slot", v.slot);
}

void to_json(json& j, const Filter& v) {
    j = {{"name", v.name}, {"id", v.id}, {"interfaces", v.interfaces}, {"rules", v.rules}};
}
void from_json(const json& j, Filter& v) {
    read(j, "name", v.name);
    read(j, "id", v.id);
    read(j, "interfaces", v.interfaces);
    read(j, "rules", v.rules);
}

void to_json(json& j, const Classifier& v) {
    j = {{"rules", v.rules},     {"groups", v.groups},   {"cross_entries", v.cross_entries},
         {"sparse_entries", v.sparse_entries}, {"results", v.results}, {"map_bytes", v.map_bytes}};
}
void from_json(const json& j, Classifier& v) {
    read(j, "rules", v.rules);
    read(j, "groups", v.groups);
    read(j, "cross_entries", v.cross_entries);
    read(j, "sparse_entries", v.sparse_entries);
    read(j, "results", v.results);
    read(j, "map_bytes", v.map_bytes);
}

void to_json(json& j, const LastReload& v) { j = {{"ok", v.ok}, {"message", v.message}}; }
void from_json(const json& j, LastReload& v) {
    read(j, "ok", v.ok);
    read(j, "message", v.message);
}

void to_json(json& j, const NatRule& v) {
    j = v.details.is_object() ? v.details : json::object();
    j["kind"] = v.kind;
    j["index"] = v.index;
    j["name"] = v.name;
    j["match"] = v.match;
    j["translation"] = v.translation;
}
void from_json(const json& j, NatRule& v) {
    read(j, "kind", v.kind);
    read(j, "index", v.index);
    read(j, "name", v.name);
    read(j, "match", v.match);
    read(j, "translation", v.translation);
    v.details = j;
    for (const char* key : {"kind", "index", "name", "match", "translation"}) v.details.erase(key);
}

void to_json(json& j, const NatRange& v) { j = {{"family", v.family}, {"first", v.first}, {"last", v.last}}; }
void from_json(const json& j, NatRange& v) {
    read(j, "family", v.family);
    read(j, "first", v.first);
    read(j, "last", v.last);
}

void to_json(json& j, const NatPool& v) {
    j = {{"name", v.name},           {"index", v.index},           {"addresses", v.addresses},
         {"ranges", v.ranges},       {"port_first", v.port_first}, {"port_last", v.port_last},
         {"persistent", v.persistent}};
}
void from_json(const json& j, NatPool& v) {
    read(j, "name", v.name);
    read(j, "index", v.index);
    read(j, "addresses", v.addresses);
    read(j, "ranges", v.ranges);
    read(j, "port_first", v.port_first);
    read(j, "port_last", v.port_last);
    read(j, "persistent", v.persistent);
}

void to_json(json& j, const Nat& v) { j = {{"rules", v.rules}, {"pools", v.pools}}; }
void from_json(const json& j, Nat& v) {
    read(j, "rules", v.rules);
    read(j, "pools", v.pools);
}

void to_json(json& j, const HostService& v) { j = {{"id", v.id}, {"name", v.name}, {"description", v.description}}; }
void from_json(const json& j, HostService& v) {
    read(j, "id", v.id);
    read(j, "name", v.name);
    read(j, "description", v.description);
}

void to_json(json& j, const HostZone& v) {
    j = {{"name", v.name}, {"id", v.id}, {"all", v.all}, {"services", v.services}};
}
void from_json(const json& j, HostZone& v) {
    read(j, "name", v.name);
    read(j, "id", v.id);
    read(j, "all", v.all);
    read(j, "services", v.services);
}

void to_json(json& j, const HostInbound& v) { j = {{"services", v.services}, {"zones", v.zones}}; }
void from_json(const json& j, HostInbound& v) {
    read(j, "services", v.services);
    read(j, "zones", v.zones);
}

void to_json(json& j, const ScanScreen& v) {
    j = {{"window_seconds", v.window_seconds}, {"action", v.action}};
    if (v.ports) j["ports"] = v.ports;
    if (v.hosts) j["hosts"] = v.hosts;
    if (v.hold_seconds) j["hold_seconds"] = v.hold_seconds;
}
void from_json(const json& j, ScanScreen& v) {
    read(j, "window_seconds", v.window_seconds);
    read(j, "action", v.action);
    read_optional(j, "ports", v.ports);
    read_optional(j, "hosts", v.hosts);
    read_optional(j, "hold_seconds", v.hold_seconds);
}

namespace {
// The per-zone limits, written only when set, by their JSON names.
template <typename Screen, typename F>
void each_limit(Screen& z, F f) {
    f("source_sessions", z.source_sessions);
    f("source_new_sessions_per_second", z.source_new_sessions_per_second);
    f("destination_new_sessions_per_second", z.destination_new_sessions_per_second);
    f("source_icmp_packets_per_second", z.source_icmp_packets_per_second);
    f("source_udp_packets_per_second", z.source_udp_packets_per_second);
    f("destination_icmp_packets_per_second", z.destination_icmp_packets_per_second);
    f("destination_udp_packets_per_second", z.destination_udp_packets_per_second);
}
}  // namespace

void to_json(json& j, const ScreenZone& v) {
    json syn = v.syn_proxy == "above" ? json{{"above", v.syn_proxy_rate}} : json(v.syn_proxy);
    j = {{"zone", v.zone}, {"id", v.id}, {"syn_proxy", syn}, {"syn_proxy_window_scale", v.syn_proxy_window_scale}};
    each_limit(v, [&](const char* key, uint32_t value) {
        if (value) j[key] = value;
    });
    if (v.scan) j["scan"] = *v.scan;
}
void from_json(const json& j, ScreenZone& v) {
    read(j, "zone", v.zone);
    read(j, "id", v.id);
    const json& syn = j.at("syn_proxy");
    if (syn.is_object()) {
        v.syn_proxy = "above";
        read(syn, "above", v.syn_proxy_rate);
    } else {
        syn.get_to(v.syn_proxy);
    }
    read(j, "syn_proxy_window_scale", v.syn_proxy_window_scale);
    each_limit(v, [&](const char* key, uint32_t& value) { read_optional(j, key, value); });
    if (j.contains("scan")) v.scan = j.at("scan").get<ScanScreen>();
}

void to_json(json& j, const InspectPattern& v) {
    j = {{"name", v.name}, {"regex", v.regex}, {"direction", v.direction}, {"action", v.action}, {"caseless", v.caseless}};
}
void from_json(const json& j, InspectPattern& v) {
    read(j, "name", v.name);
    read(j, "regex", v.regex);
    read(j, "direction", v.direction);
    read(j, "action", v.action);
    read(j, "caseless", v.caseless);
}

void to_json(json& j, const InspectRuleset& v) {
    j = {{"name", v.name}, {"id", v.id}, {"fail_mode", v.fail_mode}};
    j["inspect_bytes"] = v.inspect_bytes ? json(*v.inspect_bytes) : json("unlimited");
    j["patterns"] = v.patterns;
}
void from_json(const json& j, InspectRuleset& v) {
    read(j, "name", v.name);
    read(j, "id", v.id);
    read(j, "fail_mode", v.fail_mode);
    const json& bytes = j.at("inspect_bytes");
    if (bytes.is_number()) v.inspect_bytes = bytes.get<uint64_t>();
    else v.inspect_bytes.reset();
    read(j, "patterns", v.patterns);
}

void to_json(json& j, const Inspect& v) {
    j = {{"running", v.running}, {"held_by_operator", v.held_by_operator}, {"changes", v.changes},
         {"counters", v.counters}};
    if (v.running) {
        j["workers"] = v.workers;
        j["tcp_port"] = v.tcp_port;
        j["udp_port"] = v.udp_port;
    }
    j["rulesets"] = v.rulesets;
}
void from_json(const json& j, Inspect& v) {
    read(j, "running", v.running);
    read(j, "held_by_operator", v.held_by_operator);
    read(j, "changes", v.changes);
    read(j, "counters", v.counters);
    if (v.running) {
        read(j, "workers", v.workers);
        read(j, "tcp_port", v.tcp_port);
        read(j, "udp_port", v.udp_port);
    }
    read(j, "rulesets", v.rulesets);
}

void to_json(json& j, const PublishedState& v) {
    j = {{"instance", v.instance},
         {"pid", v.pid},
         {"config", v.config},
         {"pin_dir", v.pin_dir},
         {"config_generation", v.config_generation},
         {"reloads", v.reloads},
         {"last_reload", v.last_reload},
         {"interfaces", v.interfaces},
         {"zones", v.zones},
         {"policies", v.policies},
         {"filters", v.filters},
         {"classifier", v.classifier},
         {"nat", v.nat},
         {"host_inbound", v.host_inbound},
         {"screens", v.screens},
         {"inspect", v.inspect},
         {"egress", v.egress},
         {"default_action", v.default_action}};
}
void from_json(const json& j, PublishedState& v) {
    read(j, "instance", v.instance);
    read(j, "pid", v.pid);
    read(j, "config", v.config);
    read(j, "pin_dir", v.pin_dir);
    read(j, "config_generation", v.config_generation);
    read(j, "reloads", v.reloads);
    read(j, "last_reload", v.last_reload);
    read(j, "interfaces", v.interfaces);
    read(j, "zones", v.zones);
    read(j, "policies", v.policies);
    read(j, "filters", v.filters);
    read(j, "classifier", v.classifier);
    read(j, "nat", v.nat);
    read(j, "host_inbound", v.host_inbound);
    read(j, "screens", v.screens);
    read(j, "inspect", v.inspect);
    if (j.contains("egress")) v.egress = j.at("egress");
    read(j, "default_action", v.default_action);
}

Result<PublishedState> parse_published_state(const json& j) {
    try {
        return j.get<PublishedState>();
    } catch (const json::exception& e) {
        return make_error(ErrorCode::Incompatible, std::string("the published state does not match this sluice: ") +
                                                       e.what());
    }
}

}  // namespace sluice::state
