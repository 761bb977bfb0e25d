// One parser per top-level section of the config file. Each checks shape and
// values of its section and fills the model; references between sections are
// checked afterwards by validate_references(), when every name is known.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_reader.h"

namespace sluice::config {

void parse_interfaces(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_zones(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_address_book(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_applications(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_policies(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_default_action(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_filters(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_timeouts(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_nat(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_inspect(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_limits(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_ha(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_egress(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_metrics(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_flow_log(YamlReader& reader, const YAML::Node& node, Config& config);
void parse_default_log(YamlReader& reader, const YAML::Node& node, Config& config);

// A `log:` value: `{ open: true, close: true, deny: true }` or a list of
// those names; enum flow_log_flag bits.
uint32_t read_log_flags(YamlReader& reader, const YAML::Node& node, const std::string& path);

// Cross-section checks: every zone, address-book, application, filter, pool and
// ruleset name used must exist; limits of the classifier maps.
void validate_references(YamlReader& reader, const YAML::Node& root, const Config& config);

// The ha section's names: interfaces, nodes in priorities (parse_ha.cpp).
void validate_ha(YamlReader& reader, const Config& config);

// The nat section as a whole: map limits, overlaps, pool families (validate_nat.cpp).
void validate_nat(YamlReader& reader, const YAML::Node& root, const Config& config);

}  // namespace sluice::config
