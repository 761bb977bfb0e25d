#include "config/sections.h"

namespace sluice::config {

void parse_zones(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "zones";
    if (!reader.expect_map(node, path)) return;
    for (const auto& [name, value] : reader.named_entries(node, path, "zone")) {
        const std::string item_path = field_path(path, name.name);
        Zone zone{name.name, name.location, {}};
        if (name.name == "any") reader.error(name.location, item_path, "\"any\" is reserved and cannot name a zone");
        // `untrust:` with nothing after it is as good as `untrust: {}`.
        if (!value.IsNull() && reader.expect_map(value, item_path)) {
            reader.check_keys(value, item_path, {"host-inbound"});
            if (const YAML::Node services = value["host-inbound"]) {
                for (const auto& [item, item_path2] :
                     reader.scalar_list(services, field_path(item_path, "host-inbound")))
                    zone.host_inbound.push_back(item.Scalar());
            }
        }
        config.zones.push_back(std::move(zone));
    }
}

}  // namespace sluice::config
