// What the egress policy makes of a name and of an upstream's answer
// (docs/egress.md), without any I/O: the proxy asks it, the tests drive it.
//
// A query's name is decided before anything is asked upstream. The answer is
// decided again as a whole: every name of its CNAME chain must be allowed,
// since a client that asked for an allowed alias connects to the chain's
// last name's addresses; one denied link denies the answer. The addresses of
// an allowed answer are what the datapath learns, each for as long as the
// answer lets the client cache it, clamped by the policy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/egress_config.h"
#include "egress/dns_message.h"
#include "egress/dns_proxy.h"

namespace sluice::egress {

// The longest CNAME chain the proxy follows (a chain of real services is a
// handful of links; a longer one is treated as broken rather than partly vetted).
inline constexpr size_t kMaxCnameLinks = 16;

struct NameVerdict {
    bool allowed = false;
    const config::EgressRule* rule = nullptr;  // the rule that decided; nullptr: the default or the blocklist
    bool blocklisted = false;                  // a doh-blocklist pattern matched
};

// The scope's decision for a normalized name, the doh-blocklist first (it
// denies for every scope). No name (one the policy cannot express) is denied.
NameVerdict decide_query_name(const config::Egress& policy, const config::EgressScope& scope,
                              const std::optional<std::string>& normalized_name);

// The rcode a denied query gets.
ldns_pkt_rcode deny_rcode(const config::Egress& policy);

struct AnswerDecision {
    enum class Kind {
        relay,     // hand `answer` to the client (after learning `addresses`)
        deny,      // a name of the chain is denied: the deny answer, nothing learned
        servfail,  // the answer is not for this query, or its chain is broken
    };
    Kind kind = Kind::servfail;
    std::string reason;                       // deny and servfail: what was wrong, for the log
    Packet answer;                            // relay: the upstream's answer with the client's id, TTLs capped
    std::vector<LearnedAddress> addresses;    // relay of a NOERROR answer: the addresses of the chain's names
    std::vector<std::string> chain;           // the names decided, the query's first
};

// Decides `response`, the upstream's answer to `query` sent under
// `upstream_id`, for `scope` of `policy`. A NOERROR answer: its CNAME chain
// from the query's name is followed and every name decided; the A/AAAA
// records owned by chain names are collected with their TTLs clamped to
// learned_ttl [minimum, maximum], and every answer record's TTL is capped at
// the maximum (a client must not cache an address longer than the datapath
// keeps it learned). Any other rcode is relayed as is and teaches nothing.
AnswerDecision decide_answer(const config::Egress& policy, const config::EgressScope& scope, const Query& query,
                             Packet response, uint16_t upstream_id);

}  // namespace sluice::egress
