#include <set>

#include "config/sections.h"

#include "observe.h"

namespace sluice::config {
namespace {

NameRef read_name_ref(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    auto text = reader.scalar(node, path);
    return NameRef{text.value_or(""), location_of(node)};
}

// `permit` | `deny` | `reject` | `inspect: RULESET` (a one-key mapping).
void read_action(YamlReader& reader, const YAML::Node& node, const std::string& path, Policy& policy) {
    if (node.IsMap()) {
        reader.check_keys(node, path, {"inspect"});
        if (auto ruleset = reader.required(node, path, "inspect")) {
            policy.action = PolicyAction::inspect;
            policy.ruleset = read_name_ref(reader, *ruleset, field_path(path, "inspect"));
        }
        return;
    }
    if (node.IsScalar() && node.Scalar() == "inspect") {
        reader.error(node, path, "inspect needs a ruleset: `action: { inspect: RULESET }`");
        return;
    }
    auto text = reader.choice(node, path, {"permit", "deny", "reject"});
    if (!text) return;
    policy.action = *text == "permit" ? PolicyAction::permit
                    : *text == "deny" ? PolicyAction::deny
                                      : PolicyAction::reject;
}

}  // namespace

void parse_policies(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "policies";
    if (!reader.expect_sequence(node, path)) return;
    std::set<std::string> names;
    for (size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        const std::string item_path = index_path(path, i);
        Policy policy;
        policy.location = location_of(item);
        if (!reader.expect_map(item, item_path)) continue;
        reader.check_keys(item, item_path, {"name", "description", "from", "to", "source",
                                            "destination", "application", "action", "log"});
        if (auto name = reader.required(item, item_path, "name")) {
            policy.name = read_name_ref(reader, *name, field_path(item_path, "name")).name;
            if (!policy.name.empty() && !names.insert(policy.name).second)
                reader.error(*name, field_path(item_path, "name"),
                             "duplicate policy name \"" + policy.name + "\"");
        }
        if (auto from = reader.required(item, item_path, "from"))
            policy.from = read_name_ref(reader, *from, field_path(item_path, "from"));
        if (auto to = reader.required(item, item_path, "to"))
            policy.to = read_name_ref(reader, *to, field_path(item_path, "to"));
        if (const YAML::Node source = item["source"])
            policy.source = read_address_match(reader, source, field_path(item_path, "source"));
        if (const YAML::Node destination = item["destination"])
            policy.destination =
                read_address_match(reader, destination, field_path(item_path, "destination"));
        if (const YAML::Node apps = item["application"]) {
            const std::string apps_path = field_path(item_path, "application");
            if (!(apps.IsScalar() && apps.Scalar() == "any")) {
                policy.any_application = false;
                for (const auto& [app, app_path] : reader.scalar_list(apps, apps_path)) {
                    if (app.Scalar() == "any") policy.any_application = true;
                    else policy.applications.push_back(NameRef{app.Scalar(), location_of(app), app_path});
                }
                if (policy.any_application) policy.applications.clear();
            }
        }
        if (auto action = reader.required(item, item_path, "action"))
            read_action(reader, *action, field_path(item_path, "action"), policy);
        if (const YAML::Node log = item["log"]) {
            policy.log = read_log_flags(reader, log, field_path(item_path, "log"));
            if ((policy.log & (FLOW_LOG_OPEN | FLOW_LOG_CLOSE)) &&
                (policy.action == PolicyAction::deny || policy.action == PolicyAction::reject))
                reader.error(log, field_path(item_path, "log"),
                             std::string("a ") + to_string(policy.action) +
                                 " policy opens no session: only deny events can be logged");
        }
        config.policies.push_back(std::move(policy));
    }
}

void parse_default_action(YamlReader& reader, const YAML::Node& node, Config& config) {
    auto text = reader.choice(node, "default-action", {"permit", "deny", "reject"});
    if (!text) return;
    config.default_action = *text == "permit" ? PolicyAction::permit
                            : *text == "deny" ? PolicyAction::deny
                                              : PolicyAction::reject;
}

}  // namespace sluice::config
