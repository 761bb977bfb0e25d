// Session entries and reservations for the NAT unit tests, built the way the
// datapath writes them (maps/nat.h): a translated flow's initiator entry is
// keyed by the original tuple and carries the translated one; its reply entry
// is keyed by the reverse of the translated tuple and carries the reverse of
// the original.
#pragma once

#include <arpa/inet.h>

#include <cstring>
#include <string>

#include "loader/nat_reservations.h"
#include "loader/session_table.h"

namespace sluice::test_nat {

inline uint32_t v4(const char* text) {
    uint32_t a = 0;
    inet_pton(AF_INET, text, &a);
    return a;
}

struct Tuple {
    uint8_t family = SLUICE_FAMILY_IPV4;
    uint32_t src[4] = {}, dst[4] = {};
    uint16_t sport = 0, dport = 0;   // host order
};

inline Tuple tuple4(const char* src, uint16_t sport, const char* dst, uint16_t dport) {
    Tuple t;
    t.src[0] = v4(src);
    t.dst[0] = v4(dst);
    t.sport = sport;
    t.dport = dport;
    return t;
}

inline Tuple tuple6(const char* src, uint16_t sport, const char* dst, uint16_t dport) {
    Tuple t;
    t.family = SLUICE_FAMILY_IPV6;
    inet_pton(AF_INET6, src, t.src);
    inet_pton(AF_INET6, dst, t.dst);
    t.sport = sport;
    t.dport = dport;
    return t;
}

inline Tuple reversed(const Tuple& t) {
    Tuple r = t;
    std::memcpy(r.src, t.dst, 16);
    std::memcpy(r.dst, t.src, 16);
    r.sport = t.dport;
    r.dport = t.sport;
    return r;
}

inline SessionEntry entry(const Tuple& key, uint8_t protocol) {
    SessionEntry e;
    e.family = key.family;
    e.protocol = protocol;
    std::memcpy(e.src_addr, key.src, 16);
    std::memcpy(e.dst_addr, key.dst, 16);
    e.src_port = htons(key.sport);
    e.dst_port = htons(key.dport);
    return e;
}

inline void set_nat(SessionEntry& e, const Tuple& out, uint8_t flags) {
    std::memcpy(e.value.nat.new_src_addr, out.src, 16);
    std::memcpy(e.value.nat.new_dst_addr, out.dst, 16);
    e.value.nat.new_src_port = htons(out.sport);
    e.value.nat.new_dst_port = htons(out.dport);
    e.value.nat.flags = flags;
}

struct Flow {
    SessionEntry initiator, reply;
};

// A flow from `original` leaving as `translated`; nat_flags on the initiator
// (the reply gets the mirrored SRC/DST flags, never PORT_HELD).
inline Flow nat_flow(const Tuple& original, const Tuple& translated, uint8_t protocol, uint8_t nat_flags) {
    Flow f{entry(original, protocol), entry(reversed(translated), protocol)};
    set_nat(f.initiator, translated, nat_flags);
    uint8_t reply_flags = ((nat_flags & SESSION_NAT_SRC) ? SESSION_NAT_DST : 0) |
                          ((nat_flags & SESSION_NAT_DST) ? SESSION_NAT_SRC : 0);
    set_nat(f.reply, reversed(original), reply_flags);
    f.reply.value.flags = SESSION_F_REPLY;
    return f;
}

inline NatReservation reservation(const Tuple& translated, const Tuple& inside, uint8_t protocol, uint32_t rule_id) {
    NatReservation r{};
    std::memcpy(r.first.addr, translated.src, 16);
    r.first.port = htons(translated.sport);
    r.first.protocol = protocol;
    r.first.family = translated.family;
    std::memcpy(r.second.inside_addr, inside.src, 16);
    r.second.inside_port = htons(inside.sport);
    r.second.rule_id = rule_id;
    return r;
}

}  // namespace sluice::test_nat
