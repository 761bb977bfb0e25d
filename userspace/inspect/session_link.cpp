#include "inspect/session_link.h"

#include <cstring>

namespace sluice::inspect {

Endpoint endpoint_of(uint8_t family, const uint32_t addr[4], uint16_t port) {
    Endpoint e;
    e.family = family == SLUICE_FAMILY_IPV4 ? AF_INET : AF_INET6;
    std::memcpy(e.addr, addr, 16);
    if (e.family == AF_INET) std::memset(&e.addr[1], 0, 12);
    e.port = port;
    return e;
}

std::optional<SessionEntry> SessionLink::find(uint8_t protocol, const Endpoint& src, const Endpoint& dst) const {
    SessionEntry e;
    e.family = src.family == AF_INET ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
    e.protocol = protocol;
    std::memcpy(e.src_addr, src.addr, 16);
    std::memcpy(e.dst_addr, dst.addr, 16);
    if (e.family == SLUICE_FAMILY_IPV4) {
        std::memset(&e.src_addr[1], 0, 12);
        std::memset(&e.dst_addr[1], 0, 12);
    }
    e.src_port = src.port;
    e.dst_port = dst.port;
    if (!read_session_entry(fd_v4_, fd_v6_, e)) return std::nullopt;
    return e;
}

Status SessionLink::set_verdict(const SessionEntry& initiator, uint8_t verdict) const {
    SessionEntry entries[2] = {initiator, reverse_of(initiator)};
    for (auto& e : entries) {
        if (!read_session_entry(fd_v4_, fd_v6_, e)) continue;  // expired meanwhile
        e.value.verdict = verdict;
        // The stage ended both connections: the session is over for the fast
        // path too (GC's short timeout; a new SYN on the tuple is a new flow).
        if (e.protocol == IPPROTO_TCP) e.value.tcp_state = TCP_SESSION_CLOSED;
        if (auto s = update_session_entry(fd_v4_, fd_v6_, e); !s) return s;
    }
    return {};
}

Status SessionLink::release_direction(const SessionEntry& entry) const {
    SessionEntry e = entry;
    if (!read_session_entry(fd_v4_, fd_v6_, e)) return {};
    e.value.punt_flags &= static_cast<uint8_t>(~SESSION_PUNT_INSPECT);
    return update_session_entry(fd_v4_, fd_v6_, e);
}

Status SessionLink::set_hold(const SessionEntry& initiator, bool hold) const {
    SessionEntry entries[2] = {initiator, reverse_of(initiator)};
    for (auto& e : entries) {
        if (!read_session_entry(fd_v4_, fd_v6_, e)) return make_error("the session expired");
        if (hold) e.value.punt_flags |= SESSION_PUNT_HOLD;
        else e.value.punt_flags &= static_cast<uint8_t>(~SESSION_PUNT_HOLD);
        if (auto s = update_session_entry(fd_v4_, fd_v6_, e); !s) return s;
    }
    return {};
}

std::optional<SessionLink::FlowEntries> SessionLink::entries(const SessionEntry& initiator) const {
    FlowEntries f{initiator, reverse_of(initiator)};
    if (!read_session_entry(fd_v4_, fd_v6_, f.initiator) || !read_session_entry(fd_v4_, fd_v6_, f.reply))
        return std::nullopt;
    return f;
}

Status SessionLink::splice(FlowEntries flow, const session_splice& client_to_server,
                           const session_splice& server_to_client) const {
    constexpr uint8_t kPunt = SESSION_PUNT_INSPECT | SESSION_PUNT_HOLD;
    for (auto* e : {&flow.initiator, &flow.reply}) {
        uint32_t last = e->value.splice.last_tsval;
        e->value.splice = e == &flow.initiator ? client_to_server : server_to_client;
        e->value.splice.last_tsval = last;
        e->value.punt_flags = static_cast<uint8_t>((e->value.punt_flags & ~kPunt) | SESSION_PUNT_SPLICED);
        if (auto s = update_session_entry(fd_v4_, fd_v6_, *e); !s) return s;
    }
    return {};
}

ServerLeg server_leg(const SessionEntry& initiator) {
    SessionEntry out = translated_tuple(initiator);
    return {endpoint_of(out.family, out.src_addr, out.src_port), endpoint_of(out.family, out.dst_addr, out.dst_port)};
}

}  // namespace sluice::inspect
