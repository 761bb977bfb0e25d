#include "compiler/compile_egress.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "compiler/resolved_rule.h"

namespace sluice::compiler {

namespace {

Error at(const config::Config& config, const config::Location& where, const std::string& path, std::string message) {
    Error e = make_error(ErrorCode::InvalidConfig, std::move(message));
    e.where = ErrorLocation{config.file, where.line, where.column, path};
    return e;
}

template <typename Key>
Key trie_key(uint32_t first_word, const config::Prefix& p) {
    Key k{};
    k.prefixlen = 32 + p.length;
    k.zone = htonl(first_word);
    std::memcpy(&k.addr, p.addr.data(), sizeof(k.addr));
    return k;
}

constexpr egress_port_range kEveryPort{0, 0xffff};

// One address rule's prefix, with what the rule says on which ports.
struct AddressClause {
    config::Prefix prefix;
    const config::EgressRule* rule;
};

// The entry for prefix `q`: every clause whose prefix contains q, in rule
// order, one per port range, up to (and including) the first covering every port.
Result<egress_prefix_rules> entry_for(const config::Config& config, const config::Prefix& q,
                                      const std::vector<AddressClause>& clauses) {
    egress_prefix_rules out{};
    for (const auto& c : clauses) {
        if (!c.prefix.contains(q)) continue;
        std::vector<egress_port_range> ranges;
        if (c.rule->ports.empty()) ranges.push_back(kEveryPort);
        for (const auto& r : c.rule->ports) ranges.push_back({r.lo, r.hi});
        for (const auto& r : ranges) {
            if (out.count == SLUICE_EGRESS_PORT_RANGES)
                return at(config, c.rule->location, c.rule->path,
                          "more than " + std::to_string(SLUICE_EGRESS_PORT_RANGES) + " port ranges of address rules apply to " +
                              q.to_string() + ": merge the rules or their ports");
            out.rules[out.count++] = {static_cast<uint8_t>(c.rule->action == config::EgressAction::allow ? 1 : 0), 0, r};
            if (r.first == 0 && r.last == 0xffff) return out;
        }
    }
    return out;
}

}  // namespace

Result<CompiledEgress> compile_egress(const config::Config& config) {
    CompiledEgress out;
    const auto& egress = config.egress;
    if (!egress.enabled || egress.scopes.empty()) return out;
    out.enabled = true;
    // Which scope already governs a (zone, source prefix): two would make the
    // trie pick one silently.
    std::map<std::pair<uint16_t, config::Prefix>, const config::EgressScope*> governed;
    for (const auto& scope : egress.scopes) {
        const std::string path = "egress.scopes." + scope.name;
        const uint16_t zone = zone_id(config, scope.from.name);
        if (!zone) return at(config, scope.from.location, path + ".from", "unknown zone \"" + scope.from.name + "\"");
        auto sources = resolve_addresses(config, scope.source);
        if (!sources) return at(config, scope.location, path + ".source", sources.error().message);
        std::vector<config::Prefix> prefixes = sources->prefixes;
        if (sources->any) {
            config::Prefix v4{}, v6{};
            v6.family = config::Family::ipv6;
            prefixes = {v4, v6};
        }
        const egress_scope_ref ref{scope.id, static_cast<uint8_t>(scope.default_action == config::EgressAction::allow),
                                   static_cast<uint8_t>(scope.verify_sni ? 1 : 0), 0};
        for (const auto& p : prefixes) {
            auto [it, fresh] = governed.emplace(std::make_pair(zone, p), &scope);
            if (!fresh)
                return at(config, scope.location, path + ".source",
                          "source " + p.to_string() + " of zone \"" + scope.from.name + "\" is already governed by scope \"" +
                              it->second->name + "\"");
            if (p.family == config::Family::ipv4)
                out.sources_v4.push_back({trie_key<egress_source_key_v4>(zone, p), ref});
            else
                out.sources_v6.push_back({trie_key<egress_source_key_v6>(zone, p), ref});
        }

        for (const auto& rule : scope.rules)
            if (!rule.names.empty() && rule.ports.size() > SLUICE_EGRESS_PORT_RANGES)
                return at(config, rule.location, rule.path + ".ports",
                          "a name rule may list at most " + std::to_string(SLUICE_EGRESS_PORT_RANGES) +
                              " port ranges (a learned address keeps that many)");
        std::vector<AddressClause> clauses;
        for (const auto& rule : scope.rules)
            for (const auto& p : rule.addresses) clauses.push_back({p, &rule});
        std::vector<config::Prefix> distinct;
        for (const auto& c : clauses)
            if (std::find(distinct.begin(), distinct.end(), c.prefix) == distinct.end()) distinct.push_back(c.prefix);
        for (const auto& q : distinct) {
            auto entry = entry_for(config, q, clauses);
            if (!entry) return entry.error();
            if (q.family == config::Family::ipv4)
                out.prefixes_v4.push_back({trie_key<egress_source_key_v4>(scope.id, q), entry.value()});
            else
                out.prefixes_v6.push_back({trie_key<egress_source_key_v6>(scope.id, q), entry.value()});
        }
    }
    return out;
}

}  // namespace sluice::compiler
