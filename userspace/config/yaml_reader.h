// Shape checks on yaml-cpp nodes that report into Diagnostics instead of
// throwing, so one pass over a file finds every problem. Section parsers use
// these and never call yaml-cpp's throwing conversions.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/diagnostics.h"

namespace sluice::config {

// "a" + "b" -> "a.b";  "a" + 2 -> "a[2]".
std::string field_path(const std::string& path, const std::string& key);
std::string index_path(const std::string& path, size_t index);

Location location_of(const YAML::Node& node);

class YamlReader {
public:
    explicit YamlReader(Diagnostics& diagnostics) : diagnostics_(diagnostics) {}

    void error(const YAML::Node& at, const std::string& path, std::string message);
    void error(Location at, const std::string& path, std::string message);

    // Each returns false (after reporting) when the node has another type.
    bool expect_map(const YAML::Node& node, const std::string& path);
    bool expect_sequence(const YAML::Node& node, const std::string& path);

    // Reports keys not in `allowed` (with a did-you-mean), duplicate keys and
    // non-scalar keys.
    void check_keys(const YAML::Node& map, const std::string& path,
                    const std::vector<std::string>& allowed);

    // A named-object map (interfaces, zones, ...): its entries in file order.
    // Duplicate names are reported once, as `duplicate <what> "name"`, and skipped.
    std::vector<std::pair<NameRef, YAML::Node>> named_entries(const YAML::Node& map,
                                                              const std::string& path,
                                                              const std::string& what);

    std::optional<std::string> scalar(const YAML::Node& node, const std::string& path);
    std::optional<bool> boolean(const YAML::Node& node, const std::string& path);
    // A whole number in [lo, hi], else `"TEXT" is not WHAT (lo-hi)`.
    std::optional<uint64_t> whole_number(const YAML::Node& node, const std::string& path, uint64_t lo, uint64_t hi,
                                         const std::string& what);

    // A field that accepts one scalar or a list of scalars: its scalar items with
    // their paths ("x" for a scalar, "x[i]" for list items). An empty list is
    // an error: "empty list (" + what_instead + ")".
    std::vector<std::pair<YAML::Node, std::string>> scalar_list(
        const YAML::Node& node, const std::string& path,
        const std::string& what_instead = "omit the key or write `any`");

    // A required key of a map: reports `missing "key"` at the map when absent.
    std::optional<YAML::Node> required(const YAML::Node& map, const std::string& path,
                                       const std::string& key);

    // One of `choices`, else an error listing them (with a did-you-mean).
    std::optional<std::string> choice(const YAML::Node& node, const std::string& path,
                                      const std::vector<std::string>& choices);

private:
    Diagnostics& diagnostics_;
};

// A source/destination style field: `any`, a prefix, an address-book name, or a
// list of prefixes and names. Names are resolved later (validate.cpp).
AddressMatch read_address_match(YamlReader& reader, const YAML::Node& node, const std::string& path);

// A port set: 80, "1024-65535", or a list of both.
std::vector<PortRange> read_ports(YamlReader& reader, const YAML::Node& node, const std::string& path);

}  // namespace sluice::config
