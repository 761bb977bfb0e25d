// The `egress:` section (docs/egress.md). Shapes and values here; the zones
// and address-book entries scopes name are checked with every other
// reference (validate.cpp).
#include <algorithm>
#include <charconv>

#include "config/endpoint.h"
#include "config/sections.h"

namespace sluice::config {
namespace {

std::vector<DomainPattern> read_patterns(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    std::vector<DomainPattern> patterns;
    for (const auto& [item, item_path] : reader.scalar_list(node, path, "give at least one name")) {
        auto pattern = parse_domain_pattern(item.Scalar());
        if (pattern) patterns.push_back(std::move(pattern.value()));
        else reader.error(item, item_path, pattern.error().message);
    }
    return patterns;
}

void read_ttl(YamlReader& reader, const YAML::Node& node, const std::string& path, EgressTtl& ttl) {
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"minimum", "maximum", "grace"});
    const std::vector<std::pair<std::string, std::chrono::seconds*>> fields = {
        {"minimum", &ttl.minimum}, {"maximum", &ttl.maximum}, {"grace", &ttl.grace}};
    for (const auto& [key, target] : fields) {
        const YAML::Node value = node[key];
        if (!value) continue;
        auto text = reader.scalar(value, field_path(path, key));
        if (!text) continue;
        if (key == "grace" && (*text == "0" || *text == "0s")) {
            *target = std::chrono::seconds{0};
            continue;
        }
        auto d = parse_duration(*text);
        if (d) *target = d.value();
        else reader.error(value, field_path(path, key), d.error().message);
    }
    if (ttl.minimum > ttl.maximum)
        reader.error(node, path,
                     "minimum " + std::to_string(ttl.minimum.count()) + "s is longer than maximum " +
                         std::to_string(ttl.maximum.count()) + "s");
}

std::optional<EgressAction> read_action(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    auto text = reader.choice(node, path, {"allow", "deny"});
    if (!text) return std::nullopt;
    return *text == "allow" ? EgressAction::allow : EgressAction::deny;
}

void read_rule(YamlReader& reader, const YAML::Node& node, const std::string& path, EgressScope& scope) {
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"action", "name", "address", "destination-port"});
    EgressRule rule;
    rule.location = location_of(node);
    rule.path = path;
    if (auto action = reader.required(node, path, "action"))
        if (auto a = read_action(reader, *action, field_path(path, "action"))) rule.action = *a;
    const YAML::Node names = node["name"], addresses = node["address"];
    if (names && addresses) {
        reader.error(node, path, "a rule matches either names or addresses: split it into two rules");
        return;
    }
    if (!names && !addresses) {
        reader.error(node, path, "missing \"name\" or \"address\" (what the rule allows or denies)");
        return;
    }
    if (names) rule.names = read_patterns(reader, names, field_path(path, "name"));
    if (addresses) {
        for (const auto& [item, item_path] : reader.scalar_list(addresses, field_path(path, "address"),
                                                                "give at least one address or prefix")) {
            auto prefix = parse_prefix(item.Scalar());
            if (prefix) rule.addresses.push_back(prefix.value());
            else reader.error(item, item_path, prefix.error().message);
        }
    }
    if (const YAML::Node ports = node["destination-port"])
        rule.ports = read_ports(reader, ports, field_path(path, "destination-port"));
    scope.rules.push_back(std::move(rule));
}

void read_scope(YamlReader& reader, const YAML::Node& node, const std::string& path, EgressScope& scope) {
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"from", "source", "default", "verify-sni", "rules"});
    if (auto from = reader.required(node, path, "from"))
        if (auto zone = reader.scalar(*from, field_path(path, "from")))
            scope.from = NameRef{*zone, location_of(*from), field_path(path, "from")};
    if (const YAML::Node source = node["source"]) scope.source = read_address_match(reader, source, field_path(path, "source"));
    if (const YAML::Node def = node["default"])
        if (auto a = read_action(reader, def, field_path(path, "default"))) scope.default_action = *a;
    if (const YAML::Node sni = node["verify-sni"])
        if (auto b = reader.boolean(sni, field_path(path, "verify-sni"))) scope.verify_sni = *b;
    if (const YAML::Node rules = node["rules"]) {
        const std::string rpath = field_path(path, "rules");
        if (!reader.expect_sequence(rules, rpath)) return;
        if (rules.size() > kMaxEgressRulesPerScope) {
            reader.error(rules, rpath,
                         "too many rules: " + std::to_string(rules.size()) + " (at most " +
                             std::to_string(kMaxEgressRulesPerScope) + " per scope)");
            return;
        }
        for (size_t i = 0; i < rules.size(); ++i) read_rule(reader, rules[i], index_path(rpath, i), scope);
    }
}

}  // namespace

Result<EgressRule> parse_egress_rule(std::string_view text, const std::string& path) {
    YAML::Node node;
    try {
        node = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        return make_error(ErrorCode::InvalidConfig, path + ": not a YAML rule (" + e.msg +
                                                        "); write e.g. '{ action: allow, name: mirror.bench.test }'");
    }
    Diagnostics diagnostics("");
    YamlReader reader(diagnostics);
    EgressScope holder;
    read_rule(reader, node, path, holder);
    if (!diagnostics.empty()) {
        std::string message;
        for (const auto& d : diagnostics.sorted()) message += (message.empty() ? "" : "\n") + format_diagnostic(d);
        return make_error(ErrorCode::InvalidConfig, message);
    }
    if (holder.rules.size() != 1) return make_error(ErrorCode::InvalidConfig, path + ": not a rule");
    return std::move(holder.rules.front());
}

void parse_egress(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "egress";
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"upstreams", "deny-answer", "learned-ttl", "doh-blocklist", "scopes"});
    Egress& egress = config.egress;
    egress.enabled = true;
    egress.location = location_of(node);
    if (const YAML::Node upstreams = node["upstreams"]) {
        const auto items = reader.scalar_list(upstreams, field_path(path, "upstreams"),
                                              "give at least one resolver, e.g. 198.18.53.1");
        if (items.size() > kMaxEgressUpstreams)
            reader.error(upstreams, field_path(path, "upstreams"),
                         "too many upstreams: " + std::to_string(items.size()) + " (at most " +
                             std::to_string(kMaxEgressUpstreams) + ")");
        for (const auto& [item, item_path] : items)
            if (auto u = read_endpoint(reader, item, item_path, 53, "an upstream resolver's address")) egress.upstreams.push_back(std::move(*u));
    }
    if (const YAML::Node answer = node["deny-answer"])
        if (auto a = reader.choice(answer, field_path(path, "deny-answer"), {"nxdomain", "refused"}))
            egress.deny_answer = *a == "refused" ? EgressDenyAnswer::refused : EgressDenyAnswer::nxdomain;
    if (const YAML::Node ttl = node["learned-ttl"]) read_ttl(reader, ttl, field_path(path, "learned-ttl"), egress.learned_ttl);
    if (const YAML::Node doh = node["doh-blocklist"])
        egress.doh_blocklist = read_patterns(reader, doh, field_path(path, "doh-blocklist"));
    const std::string spath = field_path(path, "scopes");
    const YAML::Node scopes = node["scopes"];
    if (!scopes) {
        reader.error(node, path, "missing \"scopes\" (which sources the egress policy governs)");
        return;
    }
    if (!reader.expect_map(scopes, spath)) return;
    for (const auto& [name, value] : reader.named_entries(scopes, spath, "scope")) {
        EgressScope scope;
        scope.name = name.name;
        scope.location = name.location;
        scope.id = static_cast<uint8_t>(std::min(egress.scopes.size() + 1, kMaxEgressScopes));
        read_scope(reader, value, field_path(spath, name.name), scope);
        egress.scopes.push_back(std::move(scope));
    }
    if (egress.scopes.size() > kMaxEgressScopes)
        reader.error(scopes, spath,
                     "too many scopes: " + std::to_string(egress.scopes.size()) + " (at most " +
                         std::to_string(kMaxEgressScopes) + ")");
    if (!egress.scopes.empty() && !node["upstreams"])
        reader.error(node, path, "missing \"upstreams\": the resolvers allowed names are forwarded to");
}

}  // namespace sluice::config
