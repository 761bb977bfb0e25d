#include "inspect/ruleset_db.h"

#include <hs/hs.h>

#include "config/domain_name.h"
#include "config/yaml_reader.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::inspect {
namespace {

using config::PatternDirection;

Action to_action(config::PatternAction action) {
    switch (action) {
    case config::PatternAction::reject: return Action::reject;
    case config::PatternAction::drop: return Action::drop;
    case config::PatternAction::alert: return Action::alert;
    }
    return Action::alert;
}

// SINGLEMATCH: a pattern reports at most once per stream, so a match counter
// counts connections (or datagrams) that matched, and a chatty pattern costs
// one callback. No DOTALL or MULTILINE: PCRE defaults, as docs/config.md promises
// ('.' stops at '\n'; '^'/'$' are the edges of the direction's stream).
unsigned hs_flags(const config::InspectPattern& pattern) {
    unsigned flags = HS_FLAG_SINGLEMATCH;
    if (pattern.caseless) flags |= HS_FLAG_CASELESS;
    return flags;
}

bool looks_at(PatternDirection pattern, PatternDirection stream) {
    return pattern == PatternDirection::both || pattern == stream;
}

// The compiler's message, freed; the error struct is hyperscan's to free.
std::string take_message(hs_compile_error_t* error) {
    std::string message = error && error->message ? error->message : "unknown compile error";
    hs_free_compile_error(error);
    // hyperscan names a compile flag the config cannot set; say what to change.
    if (message.find("matches empty buffer") != std::string::npos)
        message = "the pattern matches the empty string, so it would match every flow at once; make it need at "
                  "least one byte (e.g. 'x+' instead of 'x*')";
    return message;
}

// One stream-mode database of the ruleset's patterns for one direction;
// null when none looks at it.
Result<std::shared_ptr<const HsDatabase>> compile_direction(const config::Ruleset& ruleset,
                                                            PatternDirection direction) {
    std::vector<const char*> expressions;
    std::vector<unsigned> flags, ids;
    for (size_t i = 0; i < ruleset.patterns.size(); ++i) {
        const config::InspectPattern& pattern = ruleset.patterns[i];
        if (!looks_at(pattern.direction, direction)) continue;
        expressions.push_back(pattern.regex.c_str());
        flags.push_back(hs_flags(pattern));
        ids.push_back(static_cast<unsigned>(i));
    }
    if (expressions.empty()) return std::shared_ptr<const HsDatabase>();
    hs_database_t* database = nullptr;
    hs_compile_error_t* error = nullptr;
    if (hs_compile_multi(expressions.data(), flags.data(), ids.data(), static_cast<unsigned>(expressions.size()),
                         HS_MODE_STREAM, nullptr, &database, &error) != HS_SUCCESS)
        return make_error(take_message(error));
    return std::shared_ptr<const HsDatabase>(
        std::make_shared<HsDatabase>(database, std::vector<uint32_t>(ids.begin(), ids.end())));
}

// Why one pattern does not compile on its own; nullopt when it does.
std::optional<std::string> pattern_problem(const config::InspectPattern& pattern) {
    // hs_compile reads a C string: a NUL inside would silently cut the regex.
    if (pattern.regex.find('\0') != std::string::npos) return "contains a NUL byte (write it as \\x00)";
    hs_database_t* database = nullptr;
    hs_compile_error_t* error = nullptr;
    if (hs_compile(pattern.regex.c_str(), hs_flags(pattern), HS_MODE_STREAM, nullptr, &database, &error) !=
        HS_SUCCESS)
        return take_message(error);
    hs_free_database(database);
    return std::nullopt;
}

// A ruleset failed to compile: compiling each pattern alone finds every bad
// one (hyperscan names only the first). If each compiles alone, the set as a
// whole is the problem (e.g. too large) and the ruleset itself is reported.
void report_problems(const config::Config& config, const config::Ruleset& ruleset, const std::string& set_message,
                     std::vector<config::Diagnostic>& problems) {
    const std::string ruleset_path = config::field_path("inspect.rulesets", ruleset.name);
    bool found = false;
    for (size_t i = 0; i < ruleset.patterns.size(); ++i) {
        const config::InspectPattern& pattern = ruleset.patterns[i];
        if (auto problem = pattern_problem(pattern)) {
            std::string path = config::field_path(config::index_path(config::field_path(ruleset_path, "patterns"), i),
                                                  "regex");
            problems.push_back({config.file, pattern.regex_location, std::move(path), "invalid regex: " + *problem});
            found = true;
        }
    }
    if (!found)
        problems.push_back({config.file, ruleset.location, ruleset_path, "cannot compile ruleset: " + set_message});
}

}  // namespace

const char* to_string(Action action) {
    switch (action) {
    case Action::alert: return "alert";
    case Action::drop: return "drop";
    case Action::reject: return "reject";
    }
    return "?";
}

HsDatabase::~HsDatabase() { hs_free_database(database_); }

size_t HsDatabase::stream_size() const {
    size_t size = 0;
    if (hs_stream_size(database_, &size) != HS_SUCCESS) return 0;
    return size;
}

bool SniGate::allows(std::string_view sni) const {
    auto name = config::normalize_domain_name(sni);
    auto policy = cell ? cell->policy.load() : nullptr;
    if (!name || !policy) return false;  // no SNI, or not a name the policy can allow
    for (const auto& blocked : policy->doh_blocklist)
        if (blocked.matches(name.value())) return false;
    for (const auto& scope : policy->scopes)
        if (scope.id == scope_id) return config::decide_name(scope, name.value()).action == config::EgressAction::allow;
    return false;
}

std::shared_ptr<const CompiledRuleset> CompiledRulesets::find(uint16_t id) const {
    if ((id & 0xff00) == SLUICE_EGRESS_SNI_RULESET_BASE) {
        const size_t scope = id & 0xff;
        return scope == 0 || scope > sni_gates.size() ? nullptr : sni_gates[scope - 1];
    }
    if (id == 0 || id > rulesets.size()) return nullptr;
    return rulesets[id - 1];  // null for an id no ruleset has
}

size_t CompiledRulesets::pattern_count() const {
    size_t count = 0;
    for (const auto& ruleset : rulesets)
        if (ruleset) count += ruleset->patterns.size();
    return count;
}

namespace {

// One pattern-less ruleset per egress scope with verify-sni: the stage's
// counters and fail-mode (closed) follow it like any ruleset's; inspect-bytes
// 1 hands the connection back once the ClientHello was judged.
void add_sni_gates(const config::Config& config, CompiledRulesets& compiled) {
    if (!config.egress.enabled) return;
    auto cell = std::make_shared<EgressPolicyCell>();
    cell->policy.store(std::make_shared<const config::Egress>(config.egress));
    for (const auto& scope : config.egress.scopes) {
        if (!scope.verify_sni) continue;
        compiled.egress_policy = cell;
        auto out = std::make_shared<CompiledRuleset>();
        out->name = "egress-sni:" + scope.name;
        out->id = static_cast<uint16_t>(SLUICE_EGRESS_SNI_RULESET_BASE | scope.id);
        out->fail_closed = true;
        out->inspect_bytes = 1;
        out->sni_gate = std::make_shared<const SniGate>(SniGate{cell, scope.id});
        if (compiled.sni_gates.size() < scope.id) compiled.sni_gates.resize(scope.id);
        compiled.sni_gates[scope.id - 1] = std::move(out);
    }
}

}  // namespace

Result<CompiledRulesets> compile_rulesets(const config::Config& config, std::vector<config::Diagnostic>& problems) {
    const size_t problems_before = problems.size();
    CompiledRulesets compiled;
    for (size_t r = 0; r < config.rulesets.size(); ++r) {
        const config::Ruleset& ruleset = config.rulesets[r];
        auto out = std::make_shared<CompiledRuleset>();
        out->name = ruleset.name;
        out->id = config.ruleset_id(ruleset.name);
        out->fail_closed = ruleset.fail_closed;
        out->inspect_bytes = ruleset.inspect_bytes;
        for (const config::InspectPattern& pattern : ruleset.patterns)
            out->patterns.push_back({pattern.name, to_action(pattern.action), pattern.direction});

        auto client_to_server = compile_direction(ruleset, PatternDirection::client_to_server);
        auto server_to_client = compile_direction(ruleset, PatternDirection::server_to_client);
        if (!client_to_server || !server_to_client) {
            report_problems(config, ruleset, (!client_to_server ? client_to_server : server_to_client).error().message,
                            problems);
            continue;
        }
        out->client_to_server = std::move(client_to_server.value());
        out->server_to_client = std::move(server_to_client.value());
        if (compiled.rulesets.size() < out->id) compiled.rulesets.resize(out->id);
        compiled.rulesets[out->id - 1] = std::move(out);
    }
    if (problems.size() == problems_before) {
        add_sni_gates(config, compiled);
        return compiled;
    }
    std::string message;
    for (size_t i = problems_before; i < problems.size(); ++i)
        message += (message.empty() ? "" : "\n") + config::format_diagnostic(problems[i]);
    return make_error(std::move(message));
}

}  // namespace sluice::inspect
