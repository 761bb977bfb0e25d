// Inspection rulesets are parsed and validated now; compiling them into
// hyperscan databases belongs to the inspection stage.
#include <set>

#include "config/sections.h"

namespace sluice::config {
namespace {

void parse_pattern(YamlReader& reader, const YAML::Node& item, const std::string& path, InspectPattern& pattern) {
    reader.check_keys(item, path, {"name", "regex", "direction", "action", "caseless"});
    if (auto name = reader.required(item, path, "name"))
        pattern.name = reader.scalar(*name, field_path(path, "name")).value_or("");
    if (auto regex = reader.required(item, path, "regex")) {
        pattern.regex = reader.scalar(*regex, field_path(path, "regex")).value_or("");
        pattern.regex_location = location_of(*regex);
        if (regex->IsScalar() && pattern.regex.empty())
            reader.error(*regex, field_path(path, "regex"), "empty regex");
    }
    if (const YAML::Node direction = item["direction"]) {
        if (auto text = reader.choice(direction, field_path(path, "direction"),
                                      {"client-to-server", "server-to-client", "both"}))
            pattern.direction = *text == "client-to-server"   ? PatternDirection::client_to_server
                                : *text == "server-to-client" ? PatternDirection::server_to_client
                                                              : PatternDirection::both;
    }
    if (auto action = reader.required(item, path, "action")) {
        if (auto text = reader.choice(*action, field_path(path, "action"), {"reject", "drop", "alert"}))
            pattern.action = *text == "reject" ? PatternAction::reject
                             : *text == "drop" ? PatternAction::drop
                                               : PatternAction::alert;
    }
    if (const YAML::Node caseless = item["caseless"])
        pattern.caseless = reader.boolean(caseless, field_path(path, "caseless")).value_or(false);
}

void parse_ruleset(YamlReader& reader, const YAML::Node& value, const std::string& path, Ruleset& ruleset) {
    if (!reader.expect_map(value, path)) return;
    reader.check_keys(value, path, {"fail-mode", "inspect-bytes", "patterns"});
    if (const YAML::Node mode = value["fail-mode"]) {
        if (auto text = reader.choice(mode, field_path(path, "fail-mode"), {"closed", "open"}))
            ruleset.fail_closed = *text == "closed";
    }
    if (const YAML::Node bytes = value["inspect-bytes"]) {
        if (auto text = reader.scalar(bytes, field_path(path, "inspect-bytes")); text && *text != "unlimited") {
            auto size = parse_size(*text);
            if (size) ruleset.inspect_bytes = size.value();
            else reader.error(bytes, field_path(path, "inspect-bytes"), size.error().message + " or unlimited");
        }
    }
    auto patterns = reader.required(value, path, "patterns");
    const std::string patterns_path = field_path(path, "patterns");
    if (!patterns || !reader.expect_sequence(*patterns, patterns_path)) return;
    std::set<std::string> names;
    for (size_t i = 0; i < patterns->size(); ++i) {
        const YAML::Node item = (*patterns)[i];
        const std::string item_path = index_path(patterns_path, i);
        if (!reader.expect_map(item, item_path)) continue;
        InspectPattern pattern;
        pattern.location = location_of(item);
        parse_pattern(reader, item, item_path, pattern);
        if (!pattern.name.empty() && !names.insert(pattern.name).second)
            reader.error(item["name"], field_path(item_path, "name"), "duplicate pattern name \"" + pattern.name + "\"");
        ruleset.patterns.push_back(std::move(pattern));
    }
}

}  // namespace

void parse_inspect(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "inspect";
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"rulesets"});
    const YAML::Node rulesets = node["rulesets"];
    if (!rulesets) return;
    const std::string rulesets_path = "inspect.rulesets";
    if (!reader.expect_map(rulesets, rulesets_path)) return;
    for (const auto& [name, value] : reader.named_entries(rulesets, rulesets_path, "ruleset")) {
        Ruleset ruleset;
        ruleset.name = name.name;
        ruleset.location = name.location;
        parse_ruleset(reader, value, field_path(rulesets_path, name.name), ruleset);
        config.rulesets.push_back(std::move(ruleset));
    }
}

}  // namespace sluice::config
