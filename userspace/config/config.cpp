#include "config/config.h"

#include <algorithm>

namespace sluice::config {
namespace {

template <typename T>
const T* find_by_name(const std::vector<T>& list, const std::string& name) {
    auto it = std::find_if(list.begin(), list.end(), [&](const T& t) { return t.name == name; });
    return it == list.end() ? nullptr : &*it;
}

}  // namespace

const Zone* Config::find_zone(const std::string& name) const { return find_by_name(zones, name); }
const AddressBookEntry* Config::find_address(const std::string& name) const {
    return find_by_name(address_book, name);
}
const Application* Config::find_application(const std::string& name) const {
    return find_by_name(applications, name);
}
const Ruleset* Config::find_ruleset(const std::string& name) const {
    return find_by_name(rulesets, name);
}
const NatPool* Config::find_pool(const std::string& name) const { return find_by_name(nat.pools, name); }

uint16_t Config::ruleset_id(const std::string& name) const {
    if (!ruleset_ids.empty()) {
        auto it = ruleset_ids.find(name);
        return it == ruleset_ids.end() ? 0 : it->second;
    }
    for (size_t i = 0; i < rulesets.size(); ++i)
        if (rulesets[i].name == name) return static_cast<uint16_t>(i + 1);
    return 0;
}

const char* to_string(PolicyAction action) {
    switch (action) {
    case PolicyAction::permit: return "permit";
    case PolicyAction::deny: return "deny";
    case PolicyAction::reject: return "reject";
    case PolicyAction::inspect: return "inspect";
    }
    return "?";
}

}  // namespace sluice::config
