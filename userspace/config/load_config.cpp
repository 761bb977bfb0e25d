#include "config/load_config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/sections.h"
#include "config/yaml_reader.h"

namespace sluice::config {
namespace {

using SectionParser = void (*)(YamlReader&, const YAML::Node&, Config&);

// Top-level sections in the order docs/config.md lists them.
const std::vector<std::pair<std::string, SectionParser>>& sections() {
    static const std::vector<std::pair<std::string, SectionParser>> list = {
        {"interfaces", parse_interfaces},     {"zones", parse_zones},
        {"address-book", parse_address_book}, {"applications", parse_applications},
        {"policies", parse_policies},         {"default-action", parse_default_action},
        {"filters", parse_filters},           {"timeouts", parse_timeouts},
        {"nat", parse_nat},                   {"inspect", parse_inspect},
        {"limits", parse_limits},             {"ha", parse_ha},
        {"egress", parse_egress},             {"metrics", parse_metrics},
        {"flow-log", parse_flow_log},         {"default-log", parse_default_log},
    };
    return list;
}

void parse_root(YamlReader& reader, const YAML::Node& root, Config& config) {
    if (root.IsNull()) {
        reader.error(Location{1, 1}, "", "the file is empty (expected interfaces, zones and policies)");
        return;
    }
    if (!root.IsMap()) {
        reader.error(root, "", "expected a mapping of sections (interfaces, zones, policies, ...)");
        return;
    }
    std::vector<std::string> keys;
    for (const auto& section : sections()) keys.push_back(section.first);
    reader.check_keys(root, "", keys);
    for (const auto& entry : root) config.section_locations[entry.first.Scalar()] = location_of(entry.first);
    for (const auto& [key, parse] : sections()) {
        const YAML::Node node = root[key];
        // A section written with nothing after it (`nat:`) is the same as omitted.
        if (node && !node.IsNull()) parse(reader, node, config);
    }
    validate_references(reader, root, config);
}

}  // namespace

LoadResult parse_config(const std::string& text, const std::string& file_name) {
    Diagnostics diagnostics(file_name);
    YamlReader reader(diagnostics);
    Config config;
    config.file = file_name;
    try {
        const YAML::Node root = YAML::Load(text);
        parse_root(reader, root, config);
    } catch (const YAML::Exception& e) {
        // A syntax error stops the YAML parser, so it is the only problem reported.
        Location at = e.mark.is_null() ? Location{} : Location{e.mark.line + 1, e.mark.column + 1};
        diagnostics.error(at, "", "YAML syntax error: " + e.msg);
    }
    LoadResult result;
    result.diagnostics = diagnostics.sorted();
    if (result.diagnostics.empty()) result.config = std::move(config);
    return result;
}

LoadResult read_config_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        LoadResult result;
        result.diagnostics.push_back(
            Diagnostic{path, {}, "", std::string("cannot read config file: ") + std::strerror(errno)});
        return result;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_config(text.str(), path);
}

Result<Config> load_config(const std::string& path) {
    LoadResult result = read_config_file(path);
    if (result.ok()) return std::move(*result.config);
    std::string message;
    for (const auto& d : result.diagnostics) {
        if (!message.empty()) message += "\n";
        message += format_diagnostic(d);
    }
    return make_error(std::move(message));
}

}  // namespace sluice::config
