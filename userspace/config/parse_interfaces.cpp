#include <charconv>

#include "config/sections.h"

namespace sluice::config {
namespace {

// Linux interface names are at most IFNAMSIZ-1 = 15 bytes.
constexpr size_t kMaxInterfaceName = 15;

// "wan0.100" is 802.1Q VLAN 100 on wan0 (docs/config.md); the name stays as written.
bool split_vlan(YamlReader& reader, const NameRef& name, const std::string& path, Interface& out) {
    auto dot = name.name.rfind('.');
    if (dot == std::string::npos) return true;
    std::string parent = name.name.substr(0, dot);
    std::string vid_text = name.name.substr(dot + 1);
    unsigned vid = 0;
    auto [end, ec] = std::from_chars(vid_text.data(), vid_text.data() + vid_text.size(), vid);
    bool numeric = !vid_text.empty() && ec == std::errc{} && end == vid_text.data() + vid_text.size();
    if (parent.empty() || !numeric || vid < 1 || vid > 4094) {
        reader.error(name.location, path,
                     "invalid VLAN id \"" + vid_text + "\" in \"" + name.name +
                         "\" (a VLAN sub-interface is PARENT.VID with VID 1-4094)");
        return false;
    }
    out.parent = parent;
    out.vlan_id = static_cast<uint16_t>(vid);
    return true;
}

}  // namespace

void parse_interfaces(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "interfaces";
    if (!reader.expect_map(node, path)) return;
    for (const auto& [name, value] : reader.named_entries(node, path, "interface")) {
        const std::string item_path = field_path(path, name.name);
        Interface iface;
        iface.name = name.name;
        iface.location = name.location;
        if (name.name.size() > kMaxInterfaceName) {
            reader.error(name.location, item_path,
                         "interface name longer than 15 characters (the Linux limit)");
        }
        split_vlan(reader, name, item_path, iface);
        if (!reader.expect_map(value, item_path)) continue;
        reader.check_keys(value, item_path, {"zone", "xdp-mode", "filter"});
        if (auto zone = reader.required(value, item_path, "zone")) {
            if (auto text = reader.scalar(*zone, field_path(item_path, "zone")))
                iface.zone = NameRef{*text, location_of(*zone)};
        }
        if (const YAML::Node mode = value["xdp-mode"]) {
            if (auto text = reader.choice(mode, field_path(item_path, "xdp-mode"),
                                          {"auto", "native", "generic", "tc"}))
                iface.xdp_mode = *text;
        }
        if (const YAML::Node filter = value["filter"]) {
            if (auto text = reader.scalar(filter, field_path(item_path, "filter")))
                iface.filter = NameRef{*text, location_of(filter)};
        }
        config.interfaces.push_back(std::move(iface));
    }
}

}  // namespace sluice::config
