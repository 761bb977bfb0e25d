#include <set>

#include "config/sections.h"

namespace sluice::config {
namespace {

void parse_filter_rule(YamlReader& reader, const YAML::Node& item, const std::string& path,
                       FilterRule& rule) {
    reader.check_keys(item, path, {"name", "source", "destination", "protocol", "source-port",
                                   "destination-port", "action"});
    if (auto name = reader.required(item, path, "name"))
        rule.name = reader.scalar(*name, field_path(path, "name")).value_or("");
    if (const YAML::Node source = item["source"])
        rule.source = read_address_match(reader, source, field_path(path, "source"));
    if (const YAML::Node destination = item["destination"])
        rule.destination = read_address_match(reader, destination, field_path(path, "destination"));
    if (const YAML::Node proto = item["protocol"]) {
        if (auto text = reader.scalar(proto, field_path(path, "protocol"))) {
            auto parsed = parse_protocol(*text);
            if (parsed) rule.protocol = parsed.value();
            else reader.error(proto, field_path(path, "protocol"), parsed.error().message);
        }
    }
    for (const char* key : {"source-port", "destination-port"}) {
        const YAML::Node ports = item[key];
        if (!ports) continue;
        const std::string ports_path = field_path(path, key);
        if (!rule.protocol || (*rule.protocol != kProtoTcp && *rule.protocol != kProtoUdp)) {
            reader.error(ports, ports_path, std::string(key) + " needs protocol tcp or udp");
            continue;
        }
        auto ranges = read_ports(reader, ports, ports_path);
        (std::string(key) == "source-port" ? rule.source_ports : rule.destination_ports) = ranges;
    }
    if (auto action = reader.required(item, path, "action")) {
        if (auto text = reader.choice(*action, field_path(path, "action"), {"accept", "drop", "count"}))
            rule.action = *text == "accept" ? FilterAction::accept
                          : *text == "drop" ? FilterAction::drop
                                            : FilterAction::count;
    }
}

}  // namespace

// Stateless filters: ordered rules per filter; an interface names the filter
// that sees every packet it receives (compiler/filters.h).
void parse_filters(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "filters";
    if (!reader.expect_map(node, path)) return;
    for (const auto& [name, value] : reader.named_entries(node, path, "filter")) {
        const std::string filter_path = field_path(path, name.name);
        Filter filter{name.name, name.location, {}};
        if (!reader.expect_sequence(value, filter_path)) continue;
        std::set<std::string> rule_names;
        for (size_t i = 0; i < value.size(); ++i) {
            const YAML::Node item = value[i];
            const std::string rule_path = index_path(filter_path, i);
            if (!reader.expect_map(item, rule_path)) continue;
            FilterRule rule;
            rule.location = location_of(item);
            parse_filter_rule(reader, item, rule_path, rule);
            if (!rule.name.empty() && !rule_names.insert(rule.name).second)
                reader.error(item["name"], field_path(rule_path, "name"),
                             "duplicate filter rule name \"" + rule.name + "\"");
            filter.rules.push_back(std::move(rule));
        }
        config.filters.push_back(std::move(filter));
    }
}

}  // namespace sluice::config
