#include "config/check.h"

#include <nlohmann/json.hpp>

#include "compiler/compile.h"
#include "config/load_config.h"
#include "inspect/platform.h"
#include "inspect/ruleset_db.h"

namespace sluice::config {
namespace {

std::string plural(size_t n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

size_t nat_rule_count(const Nat& nat) {
    return nat.source.size() + nat.destination.size() + nat.static_rules.size() + nat.nptv6.size();
}

size_t inspect_pattern_count(const std::vector<Ruleset>& rulesets) {
    size_t count = 0;
    for (const Ruleset& ruleset : rulesets) count += ruleset.patterns.size();
    return count;
}

// Regexes are checked by the compiler that will run them: hyperscan rejects
// what PCRE accepts (back-references, look-around, patterns that match the
// empty string), and `check` must fail on what `run` would fail on.
void check_inspect_patterns(const Config& config, std::vector<Diagnostic>& problems) {
    if (config.rulesets.empty()) return;
    if (auto platform = inspect::check_platform(); !platform) {
        problems.push_back(
            Diagnostic{config.file, {}, "inspect", "cannot compile patterns: " + platform.error().message});
        return;
    }
    // The compiled databases are not kept: check applies nothing.
    (void)inspect::compile_rulesets(config, problems);
}

}  // namespace

int run_check(const std::string& path, std::ostream& out, std::ostream& err, bool json) {
    LoadResult loaded = read_config_file(path);
    std::vector<Diagnostic> problems = loaded.diagnostics;
    std::optional<CompiledConfig> compiled;
    if (loaded.ok()) {
        // Compiling proves the config fits the maps; it fails only on a bug,
        // which is still better reported here than at `run`.
        auto result = compiler::compile(*loaded.config, 0);
        if (result) compiled = std::move(result.value());
        else problems.push_back(Diagnostic{path, {}, "", "cannot compile: " + result.error().message});
        check_inspect_patterns(*loaded.config, problems);
    }

    if (!problems.empty()) {
        if (json) {
            nlohmann::json errors = nlohmann::json::array();
            for (const auto& d : problems)
                errors.push_back({{"file", d.file}, {"line", d.location.line}, {"column", d.location.column},
                                  {"path", d.path}, {"message", d.message}, {"text", format_diagnostic(d)}});
            out << nlohmann::json{{"file", path}, {"valid", false}, {"errors", errors}}.dump(2) << "\n";
        } else {
            for (const auto& d : problems) err << format_diagnostic(d) << "\n";
        }
        return 1;
    }

    const Config& c = *loaded.config;
    if (json) {
        out << nlohmann::json{{"file", path},
                              {"valid", true},
                              {"interfaces", c.interfaces.size()},
                              {"zones", c.zones.size()},
                              {"address_book", c.address_book.size()},
                              {"applications", c.applications.size()},
                              {"policies", c.policies.size()},
                              {"default_action", to_string(c.default_action)},
                              {"filters", c.filters.size()},
                              {"nat_rules", nat_rule_count(c.nat)},
                              {"inspect_rulesets", c.rulesets.size()},
                              {"inspect_patterns", inspect_pattern_count(c.rulesets)},
                              {"app_classes", compiled->tables.app_bits.size()}}
                   .dump(2)
            << "\n";
    } else {
        out << path << ": ok: " << plural(c.interfaces.size(), "interface", "interfaces") << ", "
            << plural(c.zones.size(), "zone", "zones") << ", "
            << plural(c.address_book.size(), "address-book entry", "address-book entries") << ", "
            << plural(c.applications.size(), "application", "applications") << ", "
            << plural(c.policies.size(), "policy", "policies") << " (default " << to_string(c.default_action)
            << "), " << plural(c.filters.size(), "filter", "filters") << ", "
            << plural(nat_rule_count(c.nat), "NAT rule", "NAT rules") << ", "
            << plural(c.rulesets.size(), "inspect ruleset", "inspect rulesets") << " ("
            << plural(inspect_pattern_count(c.rulesets), "pattern", "patterns") << ")\n";
    }
    return 0;
}

}  // namespace sluice::config
