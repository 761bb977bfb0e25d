// The `egress:` section (docs/egress.md): which DNS names, addresses and
// ports the sources it governs may reach. A scope governs the flows from one
// zone (optionally only some of its addresses); its ordered rules allow or
// deny names (exact or `*.suffix`) and destination prefixes, first match
// wins, else the scope's default. The proxy answers the names; the addresses
// of allowed answers are learned for the scope for a clamped TTL.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/address_match.h"
#include "config/diagnostics.h"
#include "config/domain_name.h"
#include "config/endpoint.h"
#include "config/prefix.h"
#include "config/values.h"

namespace sluice::config {

enum class EgressAction { allow, deny };
// What a denied query gets back.
enum class EgressDenyAnswer { nxdomain, refused };

struct EgressRule {
    Location location;
    std::string path;                      // "egress.scopes.builds.rules[2]"
    EgressAction action = EgressAction::deny;
    std::vector<DomainPattern> names;      // a name rule, or
    std::vector<Prefix> addresses;         // an address rule (exactly one kind)
    std::vector<PortRange> ports;          // empty: every destination port
};

struct EgressScope {
    std::string name;
    Location location;
    uint8_t id = 0;                        // 1-based, file order
    NameRef from;                          // the source zone
    AddressMatch source;                   // `any` unless narrowed
    EgressAction default_action = EgressAction::deny;
    bool verify_sni = false;               // TLS to a learned address: the SNI must be allowed too
    std::vector<EgressRule> rules;
};

using EgressUpstream = Endpoint;   // port 53 unless written

// How long a learned address stays: the answer's TTL clamped to
// [minimum, maximum], plus grace (a client that got the answer at the end of
// its TTL still connects).
struct EgressTtl {
    std::chrono::seconds minimum{10};
    std::chrono::seconds maximum{3600};
    std::chrono::seconds grace{10};
};

inline constexpr size_t kMaxEgressScopes = 255;       // ids fit a byte in the learned-address key
inline constexpr size_t kMaxEgressRulesPerScope = 1024;
inline constexpr size_t kMaxEgressUpstreams = 8;

struct Egress {
    bool enabled = false;                  // the section is present
    Location location;
    std::vector<EgressUpstream> upstreams; // tried in order; the next on failure
    EgressDenyAnswer deny_answer = EgressDenyAnswer::nxdomain;
    EgressTtl learned_ttl;
    std::vector<DomainPattern> doh_blocklist;  // DNS-over-HTTPS servers: port 443 to them is denied
    std::vector<EgressScope> scopes;

    const EgressScope* find_scope(const std::string& name) const;
};

// What a scope decides for a query name (normalized): the rule with the most
// specific matching pattern (an exact name over any wildcard, `*.a.b.c` over
// `*.b.c`; among equals the first in the list), else the default. So a
// wildcard deny with an allow of one of its hosts admits only that host, in
// either order. Address rules never match a name.
struct EgressNameDecision {
    EgressAction action = EgressAction::deny;
    const EgressRule* rule = nullptr;      // nullptr: the scope's default decided
};
EgressNameDecision decide_name(const EgressScope& scope, std::string_view normalized_name);

const char* to_string(EgressAction action);

// One rule as `sluice egress add` takes it: the YAML of a rules[] item, e.g.
// "{ action: allow, name: mirror.bench.test, destination-port: 443 }";
// checked as the file's rules are, the errors naming `path`.
Result<EgressRule> parse_egress_rule(std::string_view text, const std::string& path);
// The same rule (action, names, addresses, ports), wherever it was written.
bool same_rule(const EgressRule& a, const EgressRule& b);
// The rule as YAML flow text, for `show egress` and messages.
std::string rule_text(const EgressRule& rule);

}  // namespace sluice::config
