// The nat section's shape and values; checks across rules and pools
// (overlaps, families, limits) are in validate_nat.cpp.
#include <set>

#include "config/sections.h"

namespace sluice::config {
namespace {

std::optional<Prefix> read_prefix(YamlReader& reader, const YAML::Node& node, const std::string& path,
                                  bool host_only) {
    auto text = reader.scalar(node, path);
    if (!text) return std::nullopt;
    auto prefix = host_only ? parse_address(*text) : parse_prefix(*text);
    if (!prefix) {
        reader.error(node, path, prefix.error().message);
        return std::nullopt;
    }
    return prefix.value();
}

std::optional<uint16_t> read_port(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    auto text = reader.scalar(node, path);
    if (!text) return std::nullopt;
    auto range = parse_port_range(*text);
    if (!range || range->lo != range->hi) {
        reader.error(node, path, range ? "expected a single port, got \"" + *text + "\""
                                       : range.error().message);
        return std::nullopt;
    }
    return range->lo;
}

NameRef read_name(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    return NameRef{reader.scalar(node, path).value_or(""), location_of(node)};
}

// "198.18.100.10-198.18.100.20", a prefix, or one address.
std::optional<AddressRange> read_range(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    const std::string& text = node.Scalar();
    std::optional<AddressRange> range;
    auto dash = text.find('-');
    if (dash == std::string::npos) {
        auto prefix = parse_prefix(text);
        if (!prefix) {
            reader.error(node, path, prefix.error().message);
            return std::nullopt;
        }
        range = range_of(prefix.value());
    } else {
        auto first = parse_address(text.substr(0, dash));
        auto last = parse_address(text.substr(dash + 1));
        if (!first || !last) {
            reader.error(node, path, (!first ? first.error() : last.error()).message);
            return std::nullopt;
        }
        if (first->family != last->family || last->addr < first->addr) {
            reader.error(node, path, "invalid address range \"" + text +
                                         "\" (both ends of one family, low end first)");
            return std::nullopt;
        }
        range = AddressRange{first.value(), last.value()};
    }
    range->text = text;
    range->location = location_of(node);
    range->path = path;
    return range;
}

// Ports a pool hands out; port 0 is no port a flow can use.
void read_pool_ports(YamlReader& reader, const YAML::Node& ports, const std::string& path, NatPool& pool) {
    auto text = reader.scalar(ports, path);
    if (!text) return;
    auto range = parse_port_range(*text);
    if (!range) reader.error(ports, path, range.error().message);
    else if (range->lo == 0) reader.error(ports, path, "pool ports must be within 1-65535, got \"" + *text + "\"");
    else pool.ports = range.value();
}

void parse_pools(YamlReader& reader, const YAML::Node& node, const std::string& path, Nat& nat) {
    if (!reader.expect_map(node, path)) return;
    for (const auto& [name, value] : reader.named_entries(node, path, "pool")) {
        const std::string pool_path = field_path(path, name.name);
        NatPool pool;
        pool.name = name.name;
        pool.location = name.location;
        if (!reader.expect_map(value, pool_path)) continue;
        reader.check_keys(value, pool_path, {"addresses", "ports", "persistent"});
        if (auto addresses = reader.required(value, pool_path, "addresses")) {
            const std::string addresses_path = field_path(pool_path, "addresses");
            pool.addresses_location = location_of(*addresses);
            if (addresses->IsNull() || (addresses->IsSequence() && addresses->size() == 0))
                reader.error(*addresses, addresses_path, "a pool needs at least one address, prefix or range");
            else
                for (const auto& [item, item_path] : reader.scalar_list(*addresses, addresses_path))
                    if (auto range = read_range(reader, item, item_path)) pool.addresses.push_back(*range);
        }
        if (const YAML::Node ports = value["ports"]) read_pool_ports(reader, ports, field_path(pool_path, "ports"), pool);
        if (const YAML::Node persistent = value["persistent"])
            pool.persistent = reader.boolean(persistent, field_path(pool_path, "persistent")).value_or(false);
        nat.pools.push_back(std::move(pool));
    }
}

void parse_source_rule(YamlReader& reader, const YAML::Node& item, const std::string& path,
                       SourceNatRule& rule) {
    reader.check_keys(item, path, {"name", "from", "to", "source", "destination", "translate"});
    if (auto name = reader.required(item, path, "name")) rule.name = read_name(reader, *name, field_path(path, "name")).name;
    if (auto from = reader.required(item, path, "from")) rule.from = read_name(reader, *from, field_path(path, "from"));
    if (auto to = reader.required(item, path, "to")) rule.to = read_name(reader, *to, field_path(path, "to"));
    if (const YAML::Node source = item["source"])
        rule.source = read_address_match(reader, source, field_path(path, "source"));
    if (const YAML::Node destination = item["destination"])
        rule.destination = read_address_match(reader, destination, field_path(path, "destination"));
    auto translate = reader.required(item, path, "translate");
    if (!translate) return;
    const std::string translate_path = field_path(path, "translate");
    if (translate->IsMap()) {
        reader.check_keys(*translate, translate_path, {"pool"});
        if (auto pool = reader.required(*translate, translate_path, "pool"))
            rule.pool = read_name(reader, *pool, field_path(translate_path, "pool"));
    } else if (translate->IsScalar() && translate->Scalar() == "interface") {
        rule.translate_interface = true;
    } else {
        reader.error(*translate, translate_path, "expected `interface` or `{ pool: NAME }`");
    }
}

void parse_destination_rule(YamlReader& reader, const YAML::Node& item, const std::string& path,
                            DestinationNatRule& rule) {
    reader.check_keys(item, path, {"name", "from", "destination", "protocol", "port", "translate-to"});
    if (auto name = reader.required(item, path, "name")) rule.name = read_name(reader, *name, field_path(path, "name")).name;
    if (auto from = reader.required(item, path, "from")) rule.from = read_name(reader, *from, field_path(path, "from"));
    if (auto destination = reader.required(item, path, "destination")) {
        rule.destination_location = location_of(*destination);
        if (auto p = read_prefix(reader, *destination, field_path(path, "destination"), true)) rule.destination = *p;
    }
    if (const YAML::Node proto = item["protocol"]) {
        if (auto text = reader.scalar(proto, field_path(path, "protocol"))) {
            auto parsed = parse_protocol(*text);
            if (parsed) rule.protocol = parsed.value();
            else reader.error(proto, field_path(path, "protocol"), parsed.error().message);
        }
    }
    if (const YAML::Node port = item["port"]) {
        if (!rule.protocol || (*rule.protocol != kProtoTcp && *rule.protocol != kProtoUdp))
            reader.error(port, field_path(path, "port"), "port needs protocol tcp or udp");
        else rule.port = read_port(reader, port, field_path(path, "port"));
    }
    auto to = reader.required(item, path, "translate-to");
    if (!to) return;
    const std::string to_path = field_path(path, "translate-to");
    if (!reader.expect_map(*to, to_path)) return;
    reader.check_keys(*to, to_path, {"address", "port"});
    if (auto address = reader.required(*to, to_path, "address")) {
        if (auto p = read_prefix(reader, *address, field_path(to_path, "address"), true)) {
            rule.translate_address = *p;
            if (p->family != rule.destination.family)
                reader.error(*address, field_path(to_path, "address"),
                             "translated address must be of the same family as the destination");
        }
    }
    if (const YAML::Node port = (*to)["port"]) {
        if (!rule.port) reader.error(port, field_path(to_path, "port"), "translating a port needs `port` on the rule");
        else rule.translate_port = read_port(reader, port, field_path(to_path, "port"));
    }
}

// static and nptv6 entries: { inside, outside } of one family and one length.
void parse_pairs(YamlReader& reader, const YAML::Node& node, const std::string& path,
                 std::vector<PrefixNatRule>& out, bool ipv6_prefixes) {
    if (!reader.expect_sequence(node, path)) return;
    for (size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        const std::string item_path = index_path(path, i);
        if (!reader.expect_map(item, item_path)) continue;
        reader.check_keys(item, item_path, {"inside", "outside"});
        auto inside_node = reader.required(item, item_path, "inside");
        auto outside_node = reader.required(item, item_path, "outside");
        if (!inside_node || !outside_node) continue;
        auto inside = read_prefix(reader, *inside_node, field_path(item_path, "inside"), false);
        auto outside = read_prefix(reader, *outside_node, field_path(item_path, "outside"), false);
        if (!inside || !outside) continue;
        if (ipv6_prefixes && inside->family != Family::ipv6) {
            reader.error(*inside_node, field_path(item_path, "inside"), "nptv6 needs IPv6 prefixes");
            continue;
        }
        if (inside->family != outside->family || inside->length != outside->length) {
            reader.error(*outside_node, field_path(item_path, "outside"),
                         "inside and outside must have the same family and prefix length");
            continue;
        }
        out.push_back(PrefixNatRule{location_of(item), *inside, *outside, location_of(*inside_node), location_of(*outside_node)});
    }
}

template <typename Rule, typename Parse>
void parse_rule_list(YamlReader& reader, const YAML::Node& node, const std::string& path,
                     std::vector<Rule>& out, Parse parse) {
    if (!reader.expect_sequence(node, path)) return;
    std::set<std::string> names;
    for (size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        const std::string item_path = index_path(path, i);
        if (!reader.expect_map(item, item_path)) continue;
        Rule rule;
        rule.location = location_of(item);
        parse(reader, item, item_path, rule);
        if (!rule.name.empty() && !names.insert(rule.name).second)
            reader.error(item["name"], field_path(item_path, "name"), "duplicate rule name \"" + rule.name + "\"");
        out.push_back(std::move(rule));
    }
}

}  // namespace

void parse_nat(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "nat";
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"pools", "source", "destination", "static", "nptv6"});
    Nat& nat = config.nat;
    if (const YAML::Node pools = node["pools"]) parse_pools(reader, pools, "nat.pools", nat);
    if (const YAML::Node source = node["source"])
        parse_rule_list(reader, source, "nat.source", nat.source, parse_source_rule);
    if (const YAML::Node destination = node["destination"])
        parse_rule_list(reader, destination, "nat.destination", nat.destination, parse_destination_rule);
    if (const YAML::Node statics = node["static"]) parse_pairs(reader, statics, "nat.static", nat.static_rules, false);
    if (const YAML::Node nptv6 = node["nptv6"]) parse_pairs(reader, nptv6, "nat.nptv6", nat.nptv6, true);
}

}  // namespace sluice::config
