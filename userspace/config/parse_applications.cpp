#include "config/sections.h"

namespace sluice::config {
namespace {

// The policy classifier has port slots for these only (maps/policy.h); any other
// protocol number would land in one shared "other" slot that cannot tell
// protocols apart, so it is refused rather than silently widened.
bool classifier_supports(uint8_t protocol) {
    return protocol == kProtoTcp || protocol == kProtoUdp || protocol == kProtoIcmp ||
           protocol == kProtoIcmpv6;
}

}  // namespace

void parse_applications(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "applications";
    if (!reader.expect_map(node, path)) return;
    for (const auto& [name, value] : reader.named_entries(node, path, "application")) {
        const std::string item_path = field_path(path, name.name);
        Application app{name.name, name.location, 0, {}};
        if (name.name == "any")
            reader.error(name.location, item_path, "\"any\" is reserved and cannot name an application");
        if (!reader.expect_map(value, item_path)) continue;
        reader.check_keys(value, item_path, {"protocol", "destination-port"});
        bool have_protocol = false;
        if (auto proto_node = reader.required(value, item_path, "protocol")) {
            const std::string proto_path = field_path(item_path, "protocol");
            if (auto text = reader.scalar(*proto_node, proto_path)) {
                auto proto = parse_protocol(*text);
                if (!proto) {
                    reader.error(*proto_node, proto_path, proto.error().message);
                } else if (!classifier_supports(proto.value())) {
                    reader.error(*proto_node, proto_path,
                                 "protocol " + *text +
                                     " is not supported in applications yet (use tcp, udp, icmp or icmpv6)");
                } else {
                    app.protocol = proto.value();
                    have_protocol = true;
                }
            }
        }
        if (const YAML::Node ports = value["destination-port"]) {
            const std::string ports_path = field_path(item_path, "destination-port");
            if (have_protocol && app.protocol != kProtoTcp && app.protocol != kProtoUdp) {
                reader.error(ports, ports_path,
                             "destination-port needs protocol tcp or udp, not " +
                                 protocol_name(app.protocol));
            } else {
                app.destination_ports = read_ports(reader, ports, ports_path);
            }
        }
        config.applications.push_back(std::move(app));
    }
}

}  // namespace sluice::config
