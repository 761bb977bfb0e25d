// References between sections as the config writes them: a name with where
// it was written, and a source/destination address list.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/prefix.h"

namespace sluice::config {

// A name used somewhere, with where it was written (for reference errors).
struct NameRef {
    std::string name;
    Location location;
    std::string path = {};      // where it was written, for list items (may be empty)
};

// One element of a source/destination list: a literal prefix or an address-book name.
struct AddressItem {
    std::string text;
    Location location;
    std::optional<Prefix> prefix;  // set when the item is a literal prefix
    std::string path = {};         // e.g. "policies[0].source[1]"
};

// `any` (or an omitted field) = matches every address of both families.
struct AddressMatch {
    bool any = true;
    std::vector<AddressItem> items;
};

}  // namespace sluice::config
