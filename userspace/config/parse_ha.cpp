// The `ha:` section (docs/ha.md). Shapes and values here; the names it uses
// (interfaces, nodes in priorities) are checked by validate_ha once every
// section is known.
#include <algorithm>
#include <charconv>
#include <set>

#include "config/sections.h"
#include "config/suggest.h"

namespace sluice::config {

const HaNode* Ha::find_node(const std::string& name) const {
    for (const HaNode& n : nodes)
        if (n.name == name) return &n;
    return nullptr;
}

const HaNode* Ha::peer_of(const std::string& name) const {
    if (!find_node(name)) return nullptr;
    for (const HaNode& n : nodes)
        if (n.name != name) return &n;
    return nullptr;
}

const HaGroup* Ha::group_of_interface(const std::string& name) const {
    for (const HaGroup& g : groups)
        for (const HaInterface& i : g.interfaces)
            if (i.name == name) return &g;
    return nullptr;
}

namespace {

// "198.18.1.254/24": an address and its subnet's length (host bits are the
// point here, unlike a policy prefix). `host_only`: a bare address.
std::optional<HaAddress> read_address(YamlReader& reader, const YAML::Node& node, const std::string& path,
                                      bool host_only) {
    auto text = reader.scalar(node, path);
    if (!text) return std::nullopt;
    const auto slash = text->find('/');
    if (host_only && slash != std::string::npos) {
        reader.error(node, path, "\"" + *text + "\": write the address alone, without a prefix length");
        return std::nullopt;
    }
    auto host = parse_address(text->substr(0, slash));
    if (!host) {
        reader.error(node, path, host.error().message);
        return std::nullopt;
    }
    HaAddress a;
    a.family = host.value().family;
    a.addr = host.value().addr;
    a.length = host.value().length;
    a.text = *text;
    a.location = location_of(node);
    if (slash == std::string::npos) {
        if (!host_only) {
            reader.error(node, path,
                         "\"" + *text + "\" has no prefix length: write the subnet's, e.g. " + *text +
                             (a.family == Family::ipv4 ? "/24" : "/64"));
            return std::nullopt;
        }
        return a;
    }
    const std::string len = text->substr(slash + 1);
    unsigned n = 0;
    auto [end, ec] = std::from_chars(len.data(), len.data() + len.size(), n);
    const unsigned max = a.family == Family::ipv4 ? 32 : 128;
    if (len.empty() || ec != std::errc{} || end != len.data() + len.size() || n == 0 || n > max) {
        reader.error(node, path, "\"" + *text + "\": prefix length must be 1-" + std::to_string(max));
        return std::nullopt;
    }
    a.length = static_cast<uint8_t>(n);
    return a;
}

std::optional<std::array<uint8_t, 6>> read_mac(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    auto text = reader.scalar(node, path);
    if (!text) return std::nullopt;
    std::array<uint8_t, 6> mac{};
    bool ok = text->size() == 17;
    for (size_t i = 0; ok && i < 6; ++i) {
        const char* p = text->data() + i * 3;
        auto [end, ec] = std::from_chars(p, p + 2, mac[i], 16);
        ok = ec == std::errc{} && end == p + 2 && (i == 5 || p[2] == ':');
    }
    if (!ok) {
        reader.error(node, path, "\"" + *text + "\" is not a MAC address (expected six hex bytes, 02:53:4c:00:01:01)");
        return std::nullopt;
    }
    if (mac[0] & 1) {
        reader.error(node, path, "\"" + *text + "\" is a multicast MAC address; a virtual MAC must be unicast");
        return std::nullopt;
    }
    if (mac == std::array<uint8_t, 6>{}) {
        reader.error(node, path, "\"" + *text + "\" is the zero MAC address");
        return std::nullopt;
    }
    return mac;
}

void read_heartbeat(YamlReader& reader, const YAML::Node& node, const std::string& path, Ha& ha) {
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"interval", "hold-time"});
    const std::vector<std::pair<std::string, std::chrono::milliseconds*>> fields = {
        {"interval", &ha.heartbeat_interval}, {"hold-time", &ha.hold_time}};
    for (const auto& [key, target] : fields) {
        const YAML::Node value = node[key];
        if (!value) continue;
        auto text = reader.scalar(value, field_path(path, key));
        if (!text) continue;
        auto d = parse_duration_ms(*text);
        if (d) *target = d.value();
        else reader.error(value, field_path(path, key), d.error().message);
    }
    if (ha.hold_time < 3 * ha.heartbeat_interval) {
        reader.error(node, path,
                     "hold-time " + std::to_string(ha.hold_time.count()) + "ms is less than 3 heartbeat intervals (" +
                         std::to_string(3 * ha.heartbeat_interval.count()) +
                         "ms): one late heartbeat would fail the group over");
    }
}

void read_nodes(YamlReader& reader, const YAML::Node& node, const std::string& path, Ha& ha) {
    if (!reader.expect_map(node, path)) return;
    std::set<uint8_t> ids;
    for (const auto& [name, value] : reader.named_entries(node, path, "node")) {
        const std::string npath = field_path(path, name.name);
        HaNode n;
        n.name = name.name;
        n.location = name.location;
        if (!reader.expect_map(value, npath)) continue;
        reader.check_keys(value, npath, {"id", "fabric-address"});
        if (auto id = reader.required(value, npath, "id")) {
            if (auto v = reader.whole_number(*id, field_path(npath, "id"), 1, 255, "a node id")) {
                n.id = static_cast<uint8_t>(*v);
                if (!ids.insert(n.id).second)
                    reader.error(*id, field_path(npath, "id"), "node id " + std::to_string(n.id) + " is used twice");
            }
        }
        if (auto a = reader.required(value, npath, "fabric-address")) {
            if (auto addr = read_address(reader, *a, field_path(npath, "fabric-address"), true))
                n.fabric_address = *addr;
        }
        ha.nodes.push_back(n);
    }
    if (ha.nodes.size() != 2) {
        reader.error(node, path,
                     std::to_string(ha.nodes.size()) + (ha.nodes.size() == 1 ? " node" : " nodes") +
                         ": an HA pair has exactly two");
        return;
    }
    const HaAddress& a = ha.nodes[0].fabric_address;
    const HaAddress& b = ha.nodes[1].fabric_address;
    if (!a.text.empty() && !b.text.empty()) {
        if (a.family != b.family)
            reader.error(b.location, field_path(field_path(path, ha.nodes[1].name), "fabric-address"),
                         "the two fabric addresses are of different families (" + a.text + ", " + b.text + ")");
        else if (a.addr == b.addr)
            reader.error(b.location, field_path(field_path(path, ha.nodes[1].name), "fabric-address"),
                         "both nodes have the fabric address " + b.text);
    }
}

void read_group_interface(YamlReader& reader, const YAML::Node& value, const std::string& path, HaInterface& i) {
    if (!reader.expect_map(value, path)) return;
    reader.check_keys(value, path, {"virtual-mac", "addresses"});
    if (auto mac = reader.required(value, path, "virtual-mac"))
        if (auto m = read_mac(reader, *mac, field_path(path, "virtual-mac"))) i.virtual_mac = *m;
    if (const YAML::Node addrs = value["addresses"]) {
        for (const auto& [item, ipath] :
             reader.scalar_list(addrs, field_path(path, "addresses"), "omit the key for a group without addresses"))
            if (auto a = read_address(reader, item, ipath, false)) i.addresses.push_back(*a);
    }
}

void read_group(YamlReader& reader, const YAML::Node& value, const std::string& path, HaGroup& g) {
    if (!reader.expect_map(value, path)) return;
    reader.check_keys(value, path, {"interfaces", "priority", "preempt", "monitor"});
    if (auto ifaces = reader.required(value, path, "interfaces")) {
        const std::string ipath = field_path(path, "interfaces");
        if (reader.expect_map(*ifaces, ipath)) {
            for (const auto& [name, ivalue] : reader.named_entries(*ifaces, ipath, "interface")) {
                HaInterface i;
                i.name = name.name;
                i.location = name.location;
                read_group_interface(reader, ivalue, field_path(ipath, name.name), i);
                g.interfaces.push_back(i);
            }
            if (g.interfaces.empty()) reader.error(*ifaces, ipath, "a group needs at least one interface");
        }
    }
    if (auto prio = reader.required(value, path, "priority")) {
        const std::string ppath = field_path(path, "priority");
        g.priority_location = location_of(*prio);
        if (reader.expect_map(*prio, ppath)) {
            // A bad value is reported here and kept as 0, so the node does
            // not also count as missing.
            for (const auto& [name, pvalue] : reader.named_entries(*prio, ppath, "node")) {
                auto v = reader.whole_number(pvalue, field_path(ppath, name.name), 1, 254, "a priority");
                g.priority[name.name] = static_cast<uint8_t>(v.value_or(0));
                g.priority_locations[name.name] = name.location;
            }
        }
    }
    if (const YAML::Node preempt = value["preempt"])
        if (auto b = reader.boolean(preempt, field_path(path, "preempt"))) g.preempt = *b;
    if (const YAML::Node monitor = value["monitor"]) {
        for (const auto& [item, mpath] :
             reader.scalar_list(monitor, field_path(path, "monitor"), "omit the key to monitor the group's interfaces"))
            if (auto name = reader.scalar(item, mpath)) g.monitor.push_back({*name, location_of(item), mpath});
    }
}

}  // namespace

void parse_ha(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "ha";
    Ha& ha = config.ha;
    ha.enabled = true;
    ha.location = location_of(node);
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"fabric", "port", "heartbeat", "nodes", "groups"});
    if (auto fabric = reader.required(node, path, "fabric")) {
        if (auto name = reader.scalar(*fabric, field_path(path, "fabric"))) {
            ha.fabric = *name;
            ha.fabric_location = location_of(*fabric);
        }
    }
    if (const YAML::Node port = node["port"])
        if (auto v = reader.whole_number(port, field_path(path, "port"), 1, 65535, "a UDP port"))
            ha.port = static_cast<uint16_t>(*v);
    if (const YAML::Node hb = node["heartbeat"]) read_heartbeat(reader, hb, field_path(path, "heartbeat"), ha);
    if (auto nodes = reader.required(node, path, "nodes")) read_nodes(reader, *nodes, field_path(path, "nodes"), ha);
    if (auto groups = reader.required(node, path, "groups")) {
        const std::string gpath = field_path(path, "groups");
        if (reader.expect_map(*groups, gpath)) {
            for (const auto& [name, value] : reader.named_entries(*groups, gpath, "group")) {
                HaGroup g;
                g.name = name.name;
                g.location = name.location;
                g.id = static_cast<uint8_t>(ha.groups.size() + 1);
                read_group(reader, value, field_path(gpath, name.name), g);
                ha.groups.push_back(g);
            }
            if (ha.groups.empty()) reader.error(*groups, gpath, "no groups: nothing would fail over");
        }
    }
}

namespace {

std::vector<std::string> interface_names(const Config& config) {
    std::vector<std::string> names;
    for (const Interface& i : config.interfaces) names.push_back(i.name);
    return names;
}

}  // namespace

void validate_ha(YamlReader& reader, const Config& config) {
    const Ha& ha = config.ha;
    if (!ha.enabled) return;
    const std::vector<std::string> known = interface_names(config);
    auto check_interface = [&](const std::string& name, Location at, const std::string& path) {
        if (name.empty() || std::find(known.begin(), known.end(), name) != known.end()) return true;
        reader.error(at, path, "unknown interface \"" + name + "\"" + did_you_mean(name, known) +
                                   " (an HA interface must be listed under interfaces:)");
        return false;
    };
    check_interface(ha.fabric, ha.fabric_location, "ha.fabric");
    std::vector<std::string> node_names;
    for (const HaNode& n : ha.nodes) node_names.push_back(n.name);
    std::set<std::string> grouped;
    std::set<std::array<uint8_t, 6>> macs;
    if (ha.groups.size() > kMaxHaGroups)
        reader.error(ha.location, "ha.groups",
                     std::to_string(ha.groups.size()) + " groups (at most " + std::to_string(kMaxHaGroups) + ")");
    for (const HaGroup& g : ha.groups) {
        const std::string gpath = field_path("ha.groups", g.name);
        for (const HaInterface& i : g.interfaces) {
            const std::string ipath = field_path(field_path(gpath, "interfaces"), i.name);
            if (!check_interface(i.name, i.location, ipath)) continue;
            if (i.name == ha.fabric)
                reader.error(i.location, ipath, "the fabric interface cannot be in a group (it must stay up on both nodes)");
            else if (!grouped.insert(i.name).second)
                reader.error(i.location, ipath, "interface \"" + i.name + "\" is in two groups");
            if (i.virtual_mac != std::array<uint8_t, 6>{} && !macs.insert(i.virtual_mac).second)
                reader.error(i.location, field_path(ipath, "virtual-mac"), "this virtual MAC is used twice");
        }
        for (const auto& [node, prio] : g.priority) {
            (void)prio;
            if (std::find(node_names.begin(), node_names.end(), node) == node_names.end())
                reader.error(g.priority_locations.at(node), field_path(field_path(gpath, "priority"), node),
                             "unknown node \"" + node + "\"" + did_you_mean(node, node_names) +
                                 " (the nodes are those under ha.nodes)");
        }
        for (const std::string& n : node_names)
            if (!g.priority.count(n))
                reader.error(g.priority_location, field_path(gpath, "priority"), "no priority for node \"" + n + "\"");
        for (const auto& m : g.monitor) check_interface(m.interface, m.location, m.path);
    }
}

}  // namespace sluice::config
