// Cross-section checks, run once every section is parsed so that order of
// sections in the file does not matter.
#include "config/sections.h"
#include "config/suggest.h"

extern "C" {
#include "abi.h"
#include "policy.h"
}

namespace sluice::config {
namespace {

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& list) {
    std::vector<std::string> names;
    for (const auto& item : list) names.push_back(item.name);
    return names;
}

class ReferenceChecker {
public:
    ReferenceChecker(YamlReader& reader, const Config& config)
        : reader_(reader), config_(config), zones_(names_of(config.zones)),
          addresses_(names_of(config.address_book)), applications_(names_of(config.applications)),
          filters_(names_of(config.filters)), pools_(names_of(config.nat.pools)),
          rulesets_(names_of(config.rulesets)) {}

    // An empty name was already reported by the parser (missing or wrong type).
    void name(const NameRef& ref, const std::string& path, const std::string& what,
              const std::vector<std::string>& known) {
        if (ref.name.empty()) return;
        if (std::find(known.begin(), known.end(), ref.name) != known.end()) return;
        reader_.error(ref.location, ref.path.empty() ? path : ref.path,
                      "unknown " + what + " \"" + ref.name + "\"" + did_you_mean(ref.name, known));
    }

    void zone(const NameRef& ref, const std::string& path) {
        if (!skip_zones_) name(ref, path, "zone", zones_);
    }

    // A section of the wrong shape was reported already; every reference to it
    // would only repeat that as "unknown ...".
    bool skip_zones_ = false;

    void addresses(const AddressMatch& match) {
        if (match.any) return;
        for (const AddressItem& item : match.items)
            if (!item.prefix)
                name(NameRef{item.text, item.location, item.path}, item.path, "address-book entry", addresses_);
    }

    void run() {
        for (const auto& iface : config_.interfaces) {
            const std::string path = field_path("interfaces", iface.name);
            zone(iface.zone, field_path(path, "zone"));
            if (iface.filter) name(*iface.filter, field_path(path, "filter"), "filter", filters_);
        }
        for (size_t i = 0; i < config_.policies.size(); ++i) {
            const Policy& p = config_.policies[i];
            const std::string path = index_path("policies", i);
            zone(p.from, field_path(path, "from"));
            zone(p.to, field_path(path, "to"));
            addresses(p.source);
            addresses(p.destination);
            for (size_t a = 0; a < p.applications.size(); ++a)
                name(p.applications[a], field_path(path, "application"), "application", applications_);
            if (p.action == PolicyAction::inspect)
                name(p.ruleset, field_path(path, "action.inspect"), "ruleset", rulesets_);
        }
        for (const auto& filter : config_.filters) {
            for (size_t r = 0; r < filter.rules.size(); ++r) {
                const std::string path = index_path(field_path("filters", filter.name), r);
                addresses(filter.rules[r].source);
                addresses(filter.rules[r].destination);
            }
        }
        for (size_t i = 0; i < config_.nat.source.size(); ++i) {
            const SourceNatRule& rule = config_.nat.source[i];
            const std::string path = index_path("nat.source", i);
            zone(rule.from, field_path(path, "from"));
            zone(rule.to, field_path(path, "to"));
            addresses(rule.source);
            addresses(rule.destination);
            if (rule.pool) name(*rule.pool, field_path(path, "translate.pool"), "pool", pools_);
        }
        for (size_t i = 0; i < config_.nat.destination.size(); ++i)
            zone(config_.nat.destination[i].from, field_path(index_path("nat.destination", i), "from"));
        for (const EgressScope& scope : config_.egress.scopes) {
            zone(scope.from, field_path(field_path("egress.scopes", scope.name), "from"));
            addresses(scope.source);
        }
    }

private:
    YamlReader& reader_;
    const Config& config_;
    std::vector<std::string> zones_, addresses_, applications_, filters_, pools_, rulesets_;
};

}  // namespace

void validate_references(YamlReader& reader, const YAML::Node& root, const Config& config) {
    const YAML::Node interfaces = root["interfaces"];
    if (!interfaces) {
        reader.error(root, "interfaces", "no interfaces: sluice needs at least one interface to attach to");
    } else if (interfaces.IsMap() && interfaces.size() == 0) {
        reader.error(interfaces, "interfaces", "no interfaces: sluice needs at least one interface to attach to");
    }
    if (config.zones.size() > SLUICE_MAX_ZONES - 1) {
        reader.error(root["zones"], "zones",
                     "too many zones: " + std::to_string(config.zones.size()) + " (at most " +
                         std::to_string(SLUICE_MAX_ZONES - 1) + ")");
    }
    if (config.policies.size() > POLICY_MAX_RULES) {
        reader.error(root["policies"], "policies",
                     "too many policies: " + std::to_string(config.policies.size()) + " (at most " +
                         std::to_string(POLICY_MAX_RULES) + ")");
    }
    size_t filter_rules = 0;
    for (const auto& filter : config.filters) filter_rules += filter.rules.size();
    if (filter_rules > FILTER_MAX_RULES) {
        reader.error(root["filters"], "filters",
                     "too many filter rules: " + std::to_string(filter_rules) + " in all filters (at most " +
                         std::to_string(FILTER_MAX_RULES) + ")");
    }
    ReferenceChecker checker(reader, config);
    const YAML::Node zones = root["zones"];
    checker.skip_zones_ = zones && !zones.IsMap() && !zones.IsNull();
    checker.run();
    validate_nat(reader, root, config);
    validate_ha(reader, config);
    // host-inbound's `metrics` opens the port the endpoint listens on.
    for (const auto& zone : config.zones)
        for (const auto& item : zone.host_inbound)
            if (item.name == kHostServiceMetrics && !config.metrics.written)
                reader.error(item.location, item.path,
                             "host-inbound names metrics, but the config serves no metrics: add `metrics: { listen: "
                             "ADDRESS:PORT }`");
}

}  // namespace sluice::config
