#include "egress/answer_policy.h"

#include <algorithm>
#include <sys/socket.h>

#include <cstring>

#include "config/domain_name.h"

namespace sluice::egress {
namespace {

using Kind = AnswerDecision::Kind;

AnswerDecision fail(Kind kind, std::string reason, std::vector<std::string> chain = {}) {
    AnswerDecision d;
    d.kind = kind;
    d.reason = std::move(reason);
    d.chain = std::move(chain);
    return d;
}

std::optional<std::string> normalized(const ldns_rdf* name) {
    auto n = config::normalize_domain_name(dname_text(name));
    if (!n) return std::nullopt;
    return std::move(n.value());
}

// The chain of names from the query's through the answer's CNAME records.
// A name no rule can express, two CNAMEs for one owner, a loop or more than
// kMaxCnameLinks links make the answer unusable: the names after them could
// not be vetted.
struct Chain {
    std::vector<std::string> names;
    std::optional<AnswerDecision> problem;
};

Chain follow_cnames(const ldns_rr_list* answer, const std::string& query_name, ldns_rr_class qclass) {
    Chain chain;
    chain.names.push_back(query_name);
    const size_t count = ldns_rr_list_rr_count(answer);
    while (true) {
        const std::string& current = chain.names.back();
        std::optional<std::string> target;
        for (size_t i = 0; i < count; ++i) {
            const ldns_rr* rr = ldns_rr_list_rr(answer, i);
            if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_CNAME || ldns_rr_get_class(rr) != qclass) continue;
            if (normalized(ldns_rr_owner(rr)) != current || ldns_rr_rd_count(rr) < 1) continue;
            const std::string text = dname_text(ldns_rr_rdf(rr, 0));
            auto next = config::normalize_domain_name(text);
            if (!next) {
                chain.problem = fail(Kind::deny, "the alias " + current + " points to \"" + text +
                                                     "\", which is not a host name the policy can allow");
                return chain;
            }
            if (target && *target != next.value()) {
                chain.problem = fail(Kind::servfail, "the answer has two CNAME records for " + current);
                return chain;
            }
            target = std::move(next.value());
        }
        if (!target) return chain;
        if (std::find(chain.names.begin(), chain.names.end(), *target) != chain.names.end()) {
            chain.problem = fail(Kind::servfail, "the answer's CNAME records loop at " + *target);
            return chain;
        }
        if (chain.names.size() > kMaxCnameLinks) {
            chain.problem = fail(Kind::servfail, "the answer's CNAME chain from " + query_name + " is longer than " +
                                                     std::to_string(kMaxCnameLinks) + " links");
            return chain;
        }
        chain.names.push_back(std::move(*target));
    }
}

std::chrono::seconds clamp_ttl(uint32_t ttl, const config::EgressTtl& limits) {
    std::chrono::seconds t{ttl};
    if (t > limits.maximum) t = limits.maximum;
    if (t < limits.minimum) t = limits.minimum;
    return t;
}

// The address an A or AAAA record carries, or none (another type, a short rdata).
std::optional<LearnedAddress> address_of(const ldns_rr* rr) {
    const ldns_rr_type type = ldns_rr_get_type(rr);
    if ((type != LDNS_RR_TYPE_A && type != LDNS_RR_TYPE_AAAA) || ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN ||
        ldns_rr_rd_count(rr) < 1)
        return std::nullopt;
    const ldns_rdf* rdf = ldns_rr_rdf(rr, 0);
    const size_t want = type == LDNS_RR_TYPE_A ? 4 : 16;
    if (ldns_rdf_size(rdf) != want) return std::nullopt;
    LearnedAddress a;
    a.family = type == LDNS_RR_TYPE_A ? AF_INET : AF_INET6;
    std::memcpy(a.address.data(), ldns_rdf_data(rdf), want);
    return a;
}

}  // namespace

NameVerdict decide_query_name(const config::Egress& policy, const config::EgressScope& scope,
                              const std::optional<std::string>& normalized_name) {
    if (!normalized_name) return {};
    for (const config::DomainPattern& pattern : policy.doh_blocklist)
        if (pattern.matches(*normalized_name)) return {false, nullptr, true};
    const config::EgressNameDecision d = config::decide_name(scope, *normalized_name);
    return {d.action == config::EgressAction::allow, d.rule, false};
}

ldns_pkt_rcode deny_rcode(const config::Egress& policy) {
    return policy.deny_answer == config::EgressDenyAnswer::refused ? LDNS_RCODE_REFUSED : LDNS_RCODE_NXDOMAIN;
}

AnswerDecision decide_answer(const config::Egress& policy, const config::EgressScope& scope, const Query& query,
                             Packet response, uint16_t upstream_id) {
    if (!answers_question(response.get(), upstream_id, query.question()))
        return fail(Kind::servfail, "the upstream's message does not answer the query for " + query.name);
    // Answered, though not with addresses: relayed untouched (but for the id),
    // nothing to learn from it.
    if (ldns_pkt_get_rcode(response.get()) != LDNS_RCODE_NOERROR) {
        AnswerDecision d;
        d.kind = Kind::relay;
        ldns_pkt_set_id(response.get(), query.id);
        d.answer = std::move(response);
        return d;
    }
    if (!query.normalized_name)
        return fail(Kind::deny, "\"" + query.name + "\" is not a host name the policy can allow");

    const ldns_rr_list* answer = ldns_pkt_answer(response.get());
    Chain chain = follow_cnames(answer, *query.normalized_name, query.qclass);
    if (chain.problem) {
        chain.problem->chain = std::move(chain.names);
        return std::move(*chain.problem);
    }
    std::vector<NameVerdict> verdicts;
    for (const std::string& name : chain.names) {
        NameVerdict v = decide_query_name(policy, scope, name);
        if (!v.allowed) {
            std::string why = v.blocklisted ? "is on the doh-blocklist"
                              : v.rule      ? "is denied by " + v.rule->path
                                            : "is denied by scope " + scope.name + "'s default";
            std::string reason = name == chain.names.front() ? name + " " + why
                                                             : "the alias " + chain.names.front() + " leads to " +
                                                                   name + ", which " + why;
            return fail(Kind::deny, std::move(reason), std::move(chain.names));
        }
        verdicts.push_back(v);
    }

    AnswerDecision d;
    d.kind = Kind::relay;
    const size_t count = ldns_rr_list_rr_count(answer);
    for (size_t i = 0; i < count; ++i) {
        ldns_rr* rr = ldns_rr_list_rr(answer, i);
        const uint32_t ttl = ldns_rr_ttl(rr);
        // Only addresses of the chain's own names: an address owned by any
        // other name was not vetted, and a client following the chain never
        // uses it.
        if (auto address = address_of(rr)) {
            auto owner = normalized(ldns_rr_owner(rr));
            auto at = owner ? std::find(chain.names.begin(), chain.names.end(), *owner) : chain.names.end();
            if (at != chain.names.end()) {
                address->ttl = clamp_ttl(ttl, policy.learned_ttl);
                address->rule = verdicts[static_cast<size_t>(at - chain.names.begin())].rule;
                auto same = std::find_if(d.addresses.begin(), d.addresses.end(), [&](const LearnedAddress& a) {
                    return a.family == address->family && a.address == address->address;
                });
                if (same == d.addresses.end()) d.addresses.push_back(*address);
                else same->ttl = std::max(same->ttl, address->ttl);
            }
        }
        const auto cap = static_cast<uint32_t>(std::min<int64_t>(policy.learned_ttl.maximum.count(), UINT32_MAX));
        if (ttl > cap) ldns_rr_set_ttl(rr, cap);
    }
    ldns_pkt_set_id(response.get(), query.id);
    d.answer = std::move(response);
    d.chain = std::move(chain.names);
    return d;
}

}  // namespace sluice::egress
