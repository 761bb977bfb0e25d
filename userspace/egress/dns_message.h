// DNS messages for the egress proxy, parsed and built with ldns only (no
// hand-written DNS parser: a firewall that misreads a name enforces the wrong
// policy). A query the proxy accepts has exactly one question, QR=0 and
// opcode QUERY; anything else is answered FORMERR (or dropped when not even
// the 12-byte header is there to answer to).
#pragma once

// stdbool.h first: without __bool_true_false_are_defined, ldns/common.h
// #defines bool, true and false, which breaks C++ headers included after it.
#include <stdbool.h>
#include <ldns/ldns.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"

namespace sluice::egress {

struct PacketFree {
    void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
// An ldns packet that frees itself.
using Packet = std::unique_ptr<ldns_pkt, PacketFree>;

using Wire = std::vector<uint8_t>;

// ldns_wire2pkt; the error names ldns's reason.
Result<Packet> parse_packet(std::span<const uint8_t> wire);
// ldns_pkt2wire into an owned buffer.
Result<Wire> to_wire(const ldns_pkt* packet);

// A client's query, as the proxy accepted it.
struct Query {
    Packet packet;                      // the whole message (EDNS included), forwarded upstream as is but for the id
    uint16_t id = 0;
    std::string name;                   // the question's name as ldns prints it (no trailing dot); for messages
    // The name normalized (config::normalize_domain_name); empty when the name
    // is not one the policy can express (escaped bytes, the root): such a name
    // is denied, whatever the scope's default.
    std::optional<std::string> normalized_name;
    ldns_rr_type qtype = LDNS_RR_TYPE_A;
    ldns_rr_class qclass = LDNS_RR_CLASS_IN;
    bool rd = false;
    // The largest UDP answer the client takes: 512, or its EDNS buffer size.
    size_t max_udp_answer = 512;

    const ldns_rr* question() const;
};

// Why a message is not a query the proxy takes.
struct QueryRejection {
    std::string reason;
    bool answerable = false;            // the header is there: answer FORMERR (build_formerr)
};

// Parses a query from a client: one question, QR=0, opcode QUERY.
std::variant<Query, QueryRejection> parse_query(std::span<const uint8_t> wire);

// A reply to `query` carrying only its question: the same id, QR=1, RA=1, RD
// copied, rcode as given (NXDOMAIN, REFUSED, SERVFAIL, FORMERR).
Result<Wire> build_reply(const Query& query, ldns_pkt_rcode rcode);
// FORMERR to a message that is not a query the proxy takes, built from its
// header alone (its question may be what is broken). Needs 12 bytes.
Result<Wire> build_formerr(std::span<const uint8_t> wire);
// The reply with TC set and the records left out, for an answer larger than
// the client's UDP limit: the client asks again over TCP.
Result<Wire> build_truncated(const Query& query, const ldns_pkt* answer);

// The query as sent upstream: the client's message with `id`.
Result<Wire> build_upstream_query(const Query& query, uint16_t id);

// True when `response` answers the question `sent` asked (name compared
// case-insensitively, type and class equal) under `id`.
bool answers_question(const ldns_pkt* response, uint16_t id, const ldns_rr* sent_question);

// A domain name rdf as text without the root's trailing dot ("" for the root).
std::string dname_text(const ldns_rdf* name);

const char* rcode_name(ldns_pkt_rcode rcode);

}  // namespace sluice::egress
