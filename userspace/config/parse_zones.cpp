#include <cstdlib>
#include <optional>

#include "config/sections.h"
#include "config/suggest.h"

namespace sluice::config {
namespace {

// { protocol: tcp|udp, port: P } | { protocol: icmp|icmpv6, type: T } | { protocol: N }
void read_host_entry(YamlReader& reader, const YAML::Node& node, HostInboundItem& item) {
    reader.check_keys(node, item.path, {"protocol", "port", "type"});
    auto proto_node = reader.required(node, item.path, "protocol");
    if (!proto_node) return;
    const std::string proto_path = field_path(item.path, "protocol");
    auto text = reader.scalar(*proto_node, proto_path);
    if (!text) return;
    auto proto = parse_protocol(*text);
    if (!proto) {
        reader.error(*proto_node, proto_path, proto.error().message);
        return;
    }
    if (proto.value() == 0) {
        reader.error(*proto_node, proto_path, "protocol 0 cannot be allowed on its own (use `all` for everything)");
        return;
    }
    item.match.protocol = proto.value();
    const bool ported = proto.value() == kProtoTcp || proto.value() == kProtoUdp;
    const bool icmp = proto.value() == kProtoIcmp || proto.value() == kProtoIcmpv6;
    const YAML::Node port = node["port"], type = node["type"];
    if (port && !ported)
        reader.error(port, field_path(item.path, "port"), "port needs protocol tcp or udp, not " + *text);
    if (type && !icmp)
        reader.error(type, field_path(item.path, "type"), "type needs protocol icmp or icmpv6, not " + *text);
    if (ported) {
        if (!port) reader.error(node, item.path, "missing \"port\" (protocol " + *text + " needs the ports to allow)");
        else item.match.ports = read_ports(reader, port, field_path(item.path, "port"));
    }
    if (icmp) {
        if (!type) {
            reader.error(node, item.path,
                         "missing \"type\" (the " + protocol_name(proto.value()) +
                             " type number to allow; `ping` allows echo requests)");
        } else if (auto t = reader.scalar(type, field_path(item.path, "type"))) {
            auto range = parse_port_range(*t);
            if (!range || range.value().lo != range.value().hi || range.value().lo > 255)
                reader.error(type, field_path(item.path, "type"), "an ICMP type is one number, 0-255");
            else
                item.match.ports = {range.value()};
        }
    }
}

void read_host_inbound(YamlReader& reader, const YAML::Node& node, const std::string& path, Zone& zone) {
    if (!node.IsSequence() && !node.IsScalar()) {
        reader.error(node, path, "expected a list of services (names such as ssh, or { protocol, port } entries)");
        return;
    }
    std::vector<YAML::Node> items;
    if (node.IsScalar()) items.push_back(node);
    else
        for (const auto& item : node) items.push_back(item);
    for (size_t i = 0; i < items.size(); ++i) {
        const YAML::Node& n = items[i];
        HostInboundItem item{"", location_of(n), node.IsScalar() ? path : index_path(path, i), {}};
        if (n.IsScalar()) {
            item.name = n.Scalar();
            if (item.name != kHostInboundAll && !find_named_host_service(item.name)) {
                reader.error(n, item.path,
                             "unknown service \"" + item.name + "\"" + did_you_mean(item.name, host_service_names()) +
                                 " (services: ping, ssh, dns, dhcp, ntp, bgp, http, https, traceroute, all; "
                                 "or { protocol, port })");
                continue;
            }
        } else if (n.IsMap()) {
            read_host_entry(reader, n, item);
        } else {
            reader.error(n, item.path, "expected a service name or a { protocol, port } entry");
            continue;
        }
        zone.host_inbound.push_back(std::move(item));
    }
}

// A whole number in [min, max]; otherwise an error: "TEXT" COMPLAINT.
std::optional<uint32_t> read_number(YamlReader& reader, const YAML::Node& node, const std::string& path,
                                    unsigned long long min, unsigned long long max, const std::string& complaint) {
    auto text = reader.scalar(node, path);
    if (!text) return std::nullopt;
    char* end = nullptr;
    unsigned long long n = std::strtoull(text->c_str(), &end, 10);
    if (text->empty() || *end != '\0' || n < min || n > max) {
        reader.error(node, path, "\"" + *text + "\" " + complaint);
        return std::nullopt;
    }
    return static_cast<uint32_t>(n);
}

// syn-proxy: off | always | { above: N }
void read_syn_proxy(YamlReader& reader, const YAML::Node& node, const std::string& path, ZoneScreen& screen) {
    if (node.IsMap()) {
        reader.check_keys(node, path, {"above"});
        auto above = reader.required(node, path, "above");
        if (!above) return;
        auto rate = read_number(reader, *above, field_path(path, "above"), 1, 100000000,
                                "is not a rate (permitted SYNs per second into the zone, 1-100000000)");
        if (!rate) return;
        screen.syn_proxy = ZoneScreen::SynProxy::above_rate;
        screen.syn_proxy_rate = *rate;
        return;
    }
    auto mode = reader.scalar(node, path);
    if (!mode) return;
    if (*mode != "off" && *mode != "always") {
        reader.error(node, path,
                     "invalid value \"" + *mode + "\": expected off, always or { above: N } (N: SYNs per second)");
        return;
    }
    screen.syn_proxy = *mode == "always" ? ZoneScreen::SynProxy::always : ZoneScreen::SynProxy::off;
}

// A count or rate limit: a whole number 1-100000000.
std::optional<uint32_t> read_limit(YamlReader& reader, const YAML::Node& node, const std::string& path,
                                   const std::string& what) {
    return read_number(reader, node, path, 1, 100000000, "is not a whole number of " + what + ", 1-100000000");
}

// A distinct-port or distinct-host threshold: 2-1000 (scan_state counts them
// in 256-bit sets; past ~1000 distinct values every bit is set).
std::optional<uint32_t> read_scan_threshold(YamlReader& reader, const YAML::Node& node, const std::string& path,
                                            const std::string& what) {
    return read_number(reader, node, path, 2, 1000, "is not a number of distinct " + what + ", 2-1000");
}

std::optional<std::chrono::seconds> read_duration(YamlReader& reader, const YAML::Node& node,
                                                  const std::string& path) {
    auto text = reader.scalar(node, path);
    if (!text) return std::nullopt;
    auto duration = parse_duration(*text);
    if (!duration) {
        reader.error(node, path, duration.error().message);
        return std::nullopt;
    }
    return duration.value();
}

// scan: { ports: N, hosts: N, window: 1s, action: block | count, hold-time: 60s }
void read_scan(YamlReader& reader, const YAML::Node& node, const std::string& path, ZoneScreen& screen) {
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"ports", "hosts", "window", "action", "hold-time"});
    if (node["ports"])
        screen.scan_ports = read_scan_threshold(reader, node["ports"], field_path(path, "ports"), "ports").value_or(0);
    if (node["hosts"])
        screen.scan_hosts = read_scan_threshold(reader, node["hosts"], field_path(path, "hosts"), "hosts").value_or(0);
    if (!node["ports"] && !node["hosts"])
        reader.error(node, path, "a scan screen needs ports: N, hosts: N or both (distinct ones per window)");
    if (node["window"])
        screen.scan_window = read_duration(reader, node["window"], field_path(path, "window")).value_or(screen.scan_window);
    if (node["hold-time"])
        screen.scan_hold = read_duration(reader, node["hold-time"], field_path(path, "hold-time")).value_or(screen.scan_hold);
    if (const YAML::Node action = node["action"]) {
        const std::string action_path = field_path(path, "action");
        if (auto text = reader.scalar(action, action_path)) {
            if (*text == "block" || *text == "count")
                screen.scan_block = *text == "block";
            else
                reader.error(action, action_path, "invalid value \"" + *text + "\": expected block or count");
        }
    }
    if (node["hold-time"] && !screen.scan_block)
        reader.error(node["hold-time"], field_path(path, "hold-time"), "hold-time applies to action: block only");
}

void read_screen(YamlReader& reader, const YAML::Node& node, const std::string& path, ZoneScreen& screen) {
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"syn-proxy", "source-limit", "destination-limit", "scan"});
    if (const YAML::Node scan = node["scan"]) read_scan(reader, scan, field_path(path, "scan"), screen);
    if (const YAML::Node syn = node["syn-proxy"]) read_syn_proxy(reader, syn, field_path(path, "syn-proxy"), screen);
    if (const YAML::Node src = node["source-limit"]) {
        const std::string src_path = field_path(path, "source-limit");
        if (reader.expect_map(src, src_path)) {
            reader.check_keys(src, src_path, {"sessions", "new-sessions", "icmp-packets", "udp-packets"});
            if (src["icmp-packets"])
                screen.source_icmp_rate = read_limit(reader, src["icmp-packets"], field_path(src_path, "icmp-packets"),
                                                     "ICMP packets per second").value_or(0);
            if (src["udp-packets"])
                screen.source_udp_rate = read_limit(reader, src["udp-packets"], field_path(src_path, "udp-packets"),
                                                    "UDP packets per second").value_or(0);
            if (src["sessions"])
                screen.source_sessions = read_limit(reader, src["sessions"], field_path(src_path, "sessions"),
                                                    "sessions").value_or(0);
            if (src["new-sessions"])
                screen.source_rate = read_limit(reader, src["new-sessions"], field_path(src_path, "new-sessions"),
                                                "new sessions per second").value_or(0);
        }
    }
    if (const YAML::Node dst = node["destination-limit"]) {
        const std::string dst_path = field_path(path, "destination-limit");
        if (reader.expect_map(dst, dst_path)) {
            reader.check_keys(dst, dst_path, {"new-sessions", "icmp-packets", "udp-packets"});
            if (dst["icmp-packets"])
                screen.destination_icmp_rate = read_limit(reader, dst["icmp-packets"],
                                                          field_path(dst_path, "icmp-packets"),
                                                          "ICMP packets per second").value_or(0);
            if (dst["udp-packets"])
                screen.destination_udp_rate = read_limit(reader, dst["udp-packets"],
                                                         field_path(dst_path, "udp-packets"),
                                                         "UDP packets per second").value_or(0);
            if (dst["new-sessions"])
                screen.destination_rate = read_limit(reader, dst["new-sessions"], field_path(dst_path, "new-sessions"),
                                                     "new sessions per second").value_or(0);
        }
    }
}

}  // namespace

void parse_zones(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "zones";
    if (!reader.expect_map(node, path)) return;
    for (const auto& [name, value] : reader.named_entries(node, path, "zone")) {
        const std::string item_path = field_path(path, name.name);
        Zone zone{name.name, name.location, {}, {}};
        if (name.name == "any") reader.error(name.location, item_path, "\"any\" is reserved and cannot name a zone");
        // `untrust:` with nothing after it is as good as `untrust: {}`.
        if (!value.IsNull() && reader.expect_map(value, item_path)) {
            reader.check_keys(value, item_path, {"host-inbound", "screen"});
            if (const YAML::Node services = value["host-inbound"])
                read_host_inbound(reader, services, field_path(item_path, "host-inbound"), zone);
            if (const YAML::Node screen = value["screen"])
                read_screen(reader, screen, field_path(item_path, "screen"), zone.screen);
        }
        config.zones.push_back(std::move(zone));
    }
}

}  // namespace sluice::config
