#include "egress/dns_message.h"

#include <algorithm>
#include <cstdlib>

#include "config/domain_name.h"

namespace sluice::egress {
namespace {

// RFC 1035 4.2.1: a UDP answer without EDNS is at most 512 bytes.
constexpr size_t kClassicUdpLimit = 512;
// The buffer size the proxy advertises in its own replies (the DNS flag day
// 2020 value: fits an unfragmented datagram on any usual path).
constexpr uint16_t kAdvertisedUdpSize = 1232;

std::string ldns_reason(ldns_status status) {
    const char* text = ldns_get_errorstr_by_id(status);
    return text ? text : "unknown ldns error " + std::to_string(static_cast<int>(status));
}

// A reply skeleton to `query`: id, opcode, RD copied; QR and RA set; the
// question echoed; EDNS answered with EDNS.
Packet reply_skeleton(const Query& query, ldns_pkt_rcode rcode) {
    Packet reply(ldns_pkt_new());
    if (!reply) return reply;
    ldns_pkt_set_id(reply.get(), query.id);
    ldns_pkt_set_qr(reply.get(), true);
    ldns_pkt_set_ra(reply.get(), true);
    ldns_pkt_set_rd(reply.get(), query.rd);
    ldns_pkt_set_opcode(reply.get(), LDNS_PACKET_QUERY);
    ldns_pkt_set_rcode(reply.get(), static_cast<uint8_t>(rcode));
    if (const ldns_rr* q = query.question())
        ldns_pkt_push_rr(reply.get(), LDNS_SECTION_QUESTION, ldns_rr_clone(q));
    if (ldns_pkt_edns(query.packet.get())) ldns_pkt_set_edns_udp_size(reply.get(), kAdvertisedUdpSize);
    return reply;
}

}  // namespace

Result<Packet> parse_packet(std::span<const uint8_t> wire) {
    ldns_pkt* raw = nullptr;
    ldns_status status = ldns_wire2pkt(&raw, wire.data(), wire.size());
    if (status != LDNS_STATUS_OK) return make_error("not a DNS message: " + ldns_reason(status));
    return Packet(raw);
}

Result<Wire> to_wire(const ldns_pkt* packet) {
    uint8_t* buf = nullptr;
    size_t size = 0;
    ldns_status status = ldns_pkt2wire(&buf, packet, &size);
    if (status != LDNS_STATUS_OK) {
        std::free(buf);
        return make_error("cannot encode a DNS message: " + ldns_reason(status));
    }
    Wire wire(buf, buf + size);
    std::free(buf);  // ldns allocates with malloc (LDNS_XMALLOC)
    return wire;
}

const ldns_rr* Query::question() const {
    if (!packet) return nullptr;
    return ldns_rr_list_rr(ldns_pkt_question(packet.get()), 0);
}

std::string dname_text(const ldns_rdf* name) {
    if (!name) return "";
    char* text = ldns_rdf2str(name);
    if (!text) return "";
    std::string out(text);
    std::free(text);
    if (!out.empty() && out.back() == '.') out.pop_back();
    return out;
}

std::variant<Query, QueryRejection> parse_query(std::span<const uint8_t> wire) {
    if (wire.size() < LDNS_HEADER_SIZE)
        return QueryRejection{"a " + std::to_string(wire.size()) + "-byte message is shorter than a DNS header", false};
    // A message with QR set is a response: answering it could start two
    // resolvers bouncing errors at each other, so it is dropped.
    const bool answerable = !LDNS_QR_WIRE(wire.data());
    if (!answerable) return QueryRejection{"a response (QR=1) sent as a query", false};
    auto packet = parse_packet(wire);
    if (!packet) return QueryRejection{packet.error().message, true};
    Query query;
    query.packet = std::move(packet.value());
    const ldns_pkt* p = query.packet.get();
    if (ldns_pkt_get_opcode(p) != LDNS_PACKET_QUERY)
        return QueryRejection{"opcode " + std::to_string(static_cast<int>(ldns_pkt_get_opcode(p))) + " is not QUERY", true};
    if (ldns_pkt_qdcount(p) != 1 || ldns_rr_list_rr_count(ldns_pkt_question(p)) != 1)
        return QueryRejection{std::to_string(ldns_pkt_qdcount(p)) + " questions (a query has exactly one)", true};
    const ldns_rr* q = query.question();
    query.id = ldns_pkt_id(p);
    query.rd = ldns_pkt_rd(p);
    query.qtype = ldns_rr_get_type(q);
    query.qclass = ldns_rr_get_class(q);
    query.name = dname_text(ldns_rr_owner(q));
    if (auto normalized = config::normalize_domain_name(query.name)) query.normalized_name = std::move(normalized.value());
    if (ldns_pkt_edns(p)) query.max_udp_answer = std::max<size_t>(kClassicUdpLimit, ldns_pkt_edns_udp_size(p));
    return query;
}

Result<Wire> build_reply(const Query& query, ldns_pkt_rcode rcode) {
    Packet reply = reply_skeleton(query, rcode);
    if (!reply) return make_error("cannot build a DNS reply: out of memory");
    return to_wire(reply.get());
}

Result<Wire> build_formerr(std::span<const uint8_t> wire) {
    if (wire.size() < LDNS_HEADER_SIZE) return make_error("no DNS header to answer FORMERR to");
    Packet reply(ldns_pkt_new());
    if (!reply) return make_error("cannot build a DNS reply: out of memory");
    ldns_pkt_set_id(reply.get(), LDNS_ID_WIRE(wire.data()));
    ldns_pkt_set_qr(reply.get(), true);
    ldns_pkt_set_ra(reply.get(), true);
    ldns_pkt_set_rd(reply.get(), LDNS_RD_WIRE(wire.data()) != 0);
    ldns_pkt_set_opcode(reply.get(), static_cast<ldns_pkt_opcode>(LDNS_OPCODE_WIRE(wire.data())));
    ldns_pkt_set_rcode(reply.get(), LDNS_RCODE_FORMERR);
    return to_wire(reply.get());
}

Result<Wire> build_truncated(const Query& query, const ldns_pkt* answer) {
    Packet reply = reply_skeleton(query, ldns_pkt_get_rcode(answer));
    if (!reply) return make_error("cannot build a DNS reply: out of memory");
    ldns_pkt_set_tc(reply.get(), true);
    ldns_pkt_set_aa(reply.get(), ldns_pkt_aa(answer));
    return to_wire(reply.get());
}

Result<Wire> build_upstream_query(const Query& query, uint16_t id) {
    Packet copy(ldns_pkt_clone(query.packet.get()));
    if (!copy) return make_error("cannot copy a DNS query: out of memory");
    ldns_pkt_set_id(copy.get(), id);
    return to_wire(copy.get());
}

bool answers_question(const ldns_pkt* response, uint16_t id, const ldns_rr* sent_question) {
    if (!response || !sent_question) return false;
    if (ldns_pkt_id(response) != id || !ldns_pkt_qr(response)) return false;
    const ldns_rr_list* questions = ldns_pkt_question(response);
    if (ldns_rr_list_rr_count(questions) != 1) return false;
    const ldns_rr* q = ldns_rr_list_rr(questions, 0);
    return ldns_rr_get_type(q) == ldns_rr_get_type(sent_question) &&
           ldns_rr_get_class(q) == ldns_rr_get_class(sent_question) &&
           ldns_dname_compare(ldns_rr_owner(q), ldns_rr_owner(sent_question)) == 0;
}

const char* rcode_name(ldns_pkt_rcode rcode) {
    const ldns_lookup_table* entry = ldns_lookup_by_id(ldns_rcodes, static_cast<int>(rcode));
    return entry && entry->name ? entry->name : "RCODE?";
}

}  // namespace sluice::egress
