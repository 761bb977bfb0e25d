#include "config/sections.h"

namespace sluice::config {

void parse_address_book(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "address-book";
    if (!reader.expect_map(node, path)) return;
    for (const auto& [name, value] : reader.named_entries(node, path, "address-book entry")) {
        const std::string item_path = field_path(path, name.name);
        AddressBookEntry entry{name.name, name.location, {}};
        if (name.name == "any")
            reader.error(name.location, item_path, "\"any\" is reserved and cannot name an address-book entry");
        else if (looks_like_address(name.name))
            reader.error(name.location, item_path, "an address-book name must not look like an address");
        for (const auto& [item, prefix_path] : reader.scalar_list(value, item_path)) {
            auto prefix = parse_prefix(item.Scalar());
            if (prefix) entry.prefixes.push_back(prefix.value());
            else reader.error(item, prefix_path, prefix.error().message);
        }
        config.address_book.push_back(std::move(entry));
    }
}

}  // namespace sluice::config
