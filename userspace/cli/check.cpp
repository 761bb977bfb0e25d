#include "cli/check.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

#include <net/if.h>

#include "config/handoff_features.h"
#include "config/session_table_size.h"
#include "loader/attach.h"
#include "pipeline/prepare.h"

namespace sluice::cli {
namespace {

using config::Config;
using config::Diagnostic;
using config::Filter;
using config::Limits;
using config::Nat;
using config::Ruleset;
using config::session_map_entries;
using config::session_table_bytes_estimate;

std::string plural(size_t n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

size_t nat_rule_count(const Nat& nat) {
    return nat.source.size() + nat.destination.size() + nat.static_rules.size() + nat.nptv6.size();
}

size_t filter_rule_count(const Config& config) {
    size_t count = 0;
    for (const Filter& filter : config.filters) count += filter.rules.size();
    return count;
}

std::string format_ms(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ms < 10 ? "%.1f ms" : "%.0f ms", ms);
    return buf;
}

std::string format_bytes(uint64_t bytes) {
    char buf[32];
    if (bytes < 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
    else if (bytes < 1024ull * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
    else std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

// Each group of the classifier (maps/policy.h): which rules, how many
// classes per field, how many cross-product entries.
nlohmann::json classifier_groups_json(const CompiledClassifier& t) {
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& g : t.groups)
        groups.push_back({{"shape", g.shape},
                          {"rules", g.rules},
                          {"field_classes", {{"scope", g.field_classes[0]},
                                             {"source", g.field_classes[1]},
                                             {"destination", g.field_classes[2]},
                                             {"destination_port", g.field_classes[3]},
                                             {"source_port", g.field_classes[4]}}},
                          {"cross_entries", g.cross_entries},
                          {"sparse_entries", g.sparse_entries}});
    return groups;
}

// The session maps are sized by limits.sessions when the daemon creates
// them; what that costs is worth knowing before `run` allocates it.
nlohmann::json session_table_json(const Limits& limits) {
    return {{"sessions_per_family", limits.sessions},
            {"entries_per_family", session_map_entries(limits.sessions)},
            {"bytes_estimate", session_table_bytes_estimate(limits.sessions)},
            {"default", !limits.sessions_location.has_value()}};
}

size_t inspect_pattern_count(const std::vector<Ruleset>& rulesets) {
    size_t count = 0;
    for (const Ruleset& ruleset : rulesets) count += ruleset.patterns.size();
    return count;
}

// Where each device's pipeline would run if `sluice run` attached it here
// now: the mode `xdp-mode` asks for, or what `auto` picks for the driver.
// A device not on this host is decided when it is attached.
struct AttachPlan {
    std::string device, driver, mode, why;
};

std::vector<AttachPlan> attach_plan(const Config& c) {
    std::vector<AttachPlan> plan;
    const bool native_handoff = kernel_allows_xdp_meta() || config::first_handoff_user(c).empty();
    for (const auto& itf : c.interfaces) {
        const std::string device = itf.name.substr(0, itf.name.find('.'));
        bool seen = false;
        for (const auto& p : plan) seen = seen || p.device == device;
        if (seen) continue;
        AttachPlan p{.device = device, .driver = "", .mode = "", .why = ""};
        if (if_nametoindex(device.c_str()) == 0) {
            p.why = "not on this host: decided when it is attached (xdp-mode: " + itf.xdp_mode + ")";
        } else {
            p.driver = interface_driver(device);
            const ModeChoice choice = choose_xdp_mode(itf.xdp_mode, p.driver, native_handoff);
            p.mode = choice.mode == XdpMode::Native ? "native" : choice.mode == XdpMode::Generic ? "generic" : "tc";
            p.why = choice.why + (choice.warning.empty() ? "" : "; " + choice.warning);
        }
        plan.push_back(std::move(p));
    }
    return plan;
}

nlohmann::json attach_plan_json(const std::vector<AttachPlan>& plan) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : plan)
        out.push_back({{"device", p.device},
                       {"driver", p.driver.empty() ? nlohmann::json() : nlohmann::json(p.driver)},
                       {"mode", p.mode.empty() ? nlohmann::json() : nlohmann::json(p.mode)},
                       {"why", p.why}});
    return out;
}

}  // namespace

int run_check(const std::string& path, std::ostream& out, std::ostream& err, bool json) {
    // The same preparation as run and reload: compiling proves the config
    // fits the maps (the classifier's tables can refuse it) and hyperscan
    // accepts every pattern.
    const pipeline::Prepared prepared = pipeline::prepare(path);
    const std::vector<Diagnostic>& problems = prepared.problems;
    if (!prepared.ok()) {
        if (json) {
            nlohmann::json errors = nlohmann::json::array();
            for (const auto& d : problems)
                errors.push_back({{"file", d.file}, {"line", d.location.line}, {"column", d.location.column},
                                  {"path", d.path}, {"message", d.message}, {"text", config::format_diagnostic(d)}});
            out << nlohmann::json{{"file", path}, {"valid", false}, {"errors", errors}}.dump(2) << "\n";
        } else {
            for (const auto& d : problems) err << config::format_diagnostic(d) << "\n";
        }
        return 1;
    }

    const Config& c = prepared.config->parsed;
    const CompiledClassifier& t = prepared.config->compiled.tables;
    const double compile_ms = prepared.config->compile_ms;
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
                              {"filter_rules", filter_rule_count(c)},
                              {"compile_ms", std::round(compile_ms * 10) / 10},
                              {"classifier_bytes", t.map_bytes},
                              {"classifier", {{"rules", t.rule_count},
                                              {"groups", classifier_groups_json(t)},
                                              {"cross_entries", t.cross.size()},
                                              {"cross_capacity", CLASSIFIER_CROSS_PER_GEN},
                                              {"sparse_entries", t.sparse.size()},
                                              {"sparse_capacity", CLASSIFIER_SPARSE_PER_GEN},
                                              {"results", t.results.size() - 1}}},
                              {"session_table", session_table_json(c.limits)},
                              {"attach", attach_plan_json(attach_plan(c))}}
                   .dump(2)
            << "\n";
    } else {
        out << path << ": ok: " << plural(c.interfaces.size(), "interface", "interfaces") << ", "
            << plural(c.zones.size(), "zone", "zones") << ", "
            << plural(c.address_book.size(), "address-book entry", "address-book entries") << ", "
            << plural(c.applications.size(), "application", "applications") << ", "
            << plural(c.policies.size(), "policy", "policies") << " (default " << to_string(c.default_action)
            << "), " << plural(c.filters.size(), "filter", "filters") << " ("
            << plural(filter_rule_count(c), "rule", "rules") << "), "
            << plural(nat_rule_count(c.nat), "NAT rule", "NAT rules") << ", "
            << plural(c.rulesets.size(), "inspect ruleset", "inspect rulesets") << " ("
            << plural(inspect_pattern_count(c.rulesets), "pattern", "patterns") << ")\n";
        out << path << ": compiled in " << format_ms(compile_ms) << "; classifier tables "
            << format_bytes(t.map_bytes) << " per generation (" << plural(t.rule_count, "rule", "rules") << ", "
            << t.cross.size() << " of " << CLASSIFIER_CROSS_PER_GEN << " cross-product entries, ";
        if (!t.sparse.empty()) out << t.sparse.size() << " of " << CLASSIFIER_SPARSE_PER_GEN << " sparse entries, ";
        out << plural(t.results.size() - 1, "distinct outcome", "distinct outcomes");
        if (t.groups.size() > 1) out << "; " << t.groups.size() << " groups of rules by shape, each read per packet";
        out << ")\n";
        out << path << ": session table " << c.limits.sessions << " sessions per family"
            << (c.limits.sessions_location ? "" : " (default)") << ", "
            << session_map_entries(c.limits.sessions) << " entries each in IPv4 and IPv6; about "
            << format_bytes(session_table_bytes_estimate(c.limits.sessions)) << " of kernel memory (estimate)\n";
        for (const auto& p : attach_plan(c))
            out << path << ": attach " << p.device << ": "
                << (p.mode.empty() ? "" : p.mode + " (" + p.driver + "; " + p.why + ")") << (p.mode.empty() ? p.why : "")
                << "\n";
    }
    return 0;
}

}  // namespace sluice::cli
