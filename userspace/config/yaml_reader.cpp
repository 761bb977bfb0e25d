#include "config/yaml_reader.h"

#include <charconv>
#include <set>

#include "config/suggest.h"

namespace sluice::config {
namespace {

const char* type_name(const YAML::Node& node) {
    switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "an undefined node";
    }
}

std::string join_choices(const std::vector<std::string>& choices) {
    std::string out;
    for (size_t i = 0; i < choices.size(); ++i) {
        if (i) out += i + 1 == choices.size() ? " or " : ", ";
        out += choices[i];
    }
    return out;
}

}  // namespace

std::string field_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

std::string index_path(const std::string& path, size_t index) {
    return path + "[" + std::to_string(index) + "]";
}

Location location_of(const YAML::Node& node) {
    YAML::Mark mark = node.Mark();
    if (mark.is_null()) return {};
    return Location{mark.line + 1, mark.column + 1};
}

void YamlReader::error(const YAML::Node& at, const std::string& path, std::string message) {
    error(location_of(at), path, std::move(message));
}

void YamlReader::error(Location at, const std::string& path, std::string message) {
    diagnostics_.error(at, path, std::move(message));
}

bool YamlReader::expect_map(const YAML::Node& node, const std::string& path) {
    if (node.IsMap()) return true;
    error(node, path, std::string("expected a mapping, got ") + type_name(node));
    return false;
}

bool YamlReader::expect_sequence(const YAML::Node& node, const std::string& path) {
    if (node.IsSequence()) return true;
    error(node, path, std::string("expected a list, got ") + type_name(node));
    return false;
}

void YamlReader::check_keys(const YAML::Node& map, const std::string& path,
                            const std::vector<std::string>& allowed) {
    std::set<std::string> seen;
    for (const auto& entry : map) {
        const YAML::Node& key = entry.first;
        if (!key.IsScalar()) {
            error(key, path, "keys must be plain names");
            continue;
        }
        const std::string& name = key.Scalar();
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            error(key, field_path(path, name),
                  "unknown key \"" + name + "\"" + did_you_mean(name, allowed));
        } else if (!seen.insert(name).second) {
            error(key, field_path(path, name), "duplicate key \"" + name + "\"");
        }
    }
}

std::vector<std::pair<NameRef, YAML::Node>> YamlReader::named_entries(const YAML::Node& map,
                                                                      const std::string& path,
                                                                      const std::string& what) {
    std::vector<std::pair<NameRef, YAML::Node>> out;
    std::set<std::string> seen;
    for (const auto& entry : map) {
        const YAML::Node& key = entry.first;
        if (!key.IsScalar() || key.Scalar().empty()) {
            error(key, path, what + " names must be non-empty plain names");
            continue;
        }
        const std::string& name = key.Scalar();
        if (!seen.insert(name).second) {
            error(key, field_path(path, name), "duplicate " + what + " \"" + name + "\"");
            continue;
        }
        out.emplace_back(NameRef{name, location_of(key)}, entry.second);
    }
    return out;
}

std::optional<std::string> YamlReader::scalar(const YAML::Node& node, const std::string& path) {
    if (node.IsScalar()) return node.Scalar();
    error(node, path, std::string("expected a single value, got ") + type_name(node));
    return std::nullopt;
}

std::optional<uint64_t> YamlReader::whole_number(const YAML::Node& node, const std::string& path, uint64_t lo,
                                                 uint64_t hi, const std::string& what) {
    auto text = scalar(node, path);
    if (!text) return std::nullopt;
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (text->empty() || ec != std::errc{} || end != text->data() + text->size() || n < lo || n > hi) {
        error(node, path, "\"" + *text + "\" is not " + what + " (" + std::to_string(lo) + "-" + std::to_string(hi) + ")");
        return std::nullopt;
    }
    return n;
}

std::optional<bool> YamlReader::boolean(const YAML::Node& node, const std::string& path) {
    auto text = scalar(node, path);
    if (!text) return std::nullopt;
    if (*text == "true" || *text == "yes" || *text == "on") return true;
    if (*text == "false" || *text == "no" || *text == "off") return false;
    error(node, path, "expected true or false, got \"" + *text + "\"");
    return std::nullopt;
}

std::vector<std::pair<YAML::Node, std::string>> YamlReader::scalar_list(const YAML::Node& node,
                                                                        const std::string& path,
                                                                        const std::string& what_instead) {
    std::vector<std::pair<YAML::Node, std::string>> out;
    if (node.IsScalar()) {
        out.emplace_back(node, path);
        return out;
    }
    if (!node.IsSequence()) {
        error(node, path, std::string("expected a value or a list, got ") + type_name(node));
        return out;
    }
    if (node.size() == 0) error(node, path, "empty list (" + what_instead + ")");
    for (size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        std::string item_path = index_path(path, i);
        if (item.IsScalar()) out.emplace_back(item, item_path);
        else error(item, item_path, std::string("expected a single value, got ") + type_name(item));
    }
    return out;
}

std::optional<YAML::Node> YamlReader::required(const YAML::Node& map, const std::string& path,
                                               const std::string& key) {
    const YAML::Node value = map[key];
    if (value) return value;
    error(map, path, "missing \"" + key + "\"");
    return std::nullopt;
}

std::optional<std::string> YamlReader::choice(const YAML::Node& node, const std::string& path,
                                              const std::vector<std::string>& choices) {
    auto text = scalar(node, path);
    if (!text) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *text) != choices.end()) return text;
    error(node, path, "invalid value \"" + *text + "\": expected " + join_choices(choices) +
                          did_you_mean(*text, choices));
    return std::nullopt;
}

AddressMatch read_address_match(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    AddressMatch match;
    if (node.IsScalar() && node.Scalar() == "any") return match;
    match.any = false;
    for (const auto& [item, item_path] : reader.scalar_list(node, path)) {
        const std::string& text = item.Scalar();
        if (text == "any") {
            // `any` in a list makes the whole field any; the other items are then moot.
            match.any = true;
            continue;
        }
        AddressItem address{text, location_of(item), std::nullopt, item_path};
        if (looks_like_address(text)) {
            auto prefix = parse_prefix(text);
            if (!prefix) {
                reader.error(item, item_path, prefix.error().message);
                continue;
            }
            address.prefix = prefix.value();
        }
        match.items.push_back(std::move(address));
    }
    if (match.any) match.items.clear();
    return match;
}

std::vector<PortRange> read_ports(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    std::vector<PortRange> ports;
    // Ports have no `any`: a port list that may be left out means any port.
    for (const auto& [item, item_path] :
         reader.scalar_list(node, path, "give at least one port or range, e.g. 22 or 1024-65535")) {
        auto range = parse_port_range(item.Scalar());
        if (range) ports.push_back(range.value());
        else reader.error(item, item_path, range.error().message);
    }
    return ports;
}

}  // namespace sluice::config
