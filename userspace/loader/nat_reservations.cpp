#include "loader/nat_reservations.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "loader/map_dump.h"

namespace sluice {

std::optional<nat_port_key> held_reservation(const SessionEntry& e) {
    if ((e.value.flags & SESSION_F_REPLY) || !(e.value.nat.flags & SESSION_NAT_PORT_HELD)) return std::nullopt;
    nat_port_key k{};
    std::memcpy(k.addr, e.value.nat.new_src_addr, 16);
    k.port = e.value.nat.new_src_port;
    k.protocol = e.protocol;
    k.family = e.family;
    return k;
}

std::optional<nat_port_key> orphan_reply_reservation(const SessionEntry& reply) {
    // A source-translated flow's reply entry translates its destination back
    // to the inside host; its key's destination is the reserved address/port.
    if (!(reply.value.flags & SESSION_F_REPLY) || !(reply.value.nat.flags & SESSION_NAT_DST)) return std::nullopt;
    nat_port_key k{};
    std::memcpy(k.addr, reply.dst_addr, 16);
    k.port = reply.dst_port;
    k.protocol = reply.protocol;
    k.family = reply.family;
    return k;
}

bool reservation_belongs_to(const nat_port_value& v, const SessionEntry& reply) {
    // Reservations are inserted with BPF_NOEXIST, so while this flow's exists
    // no other flow holds the key; matching the inside host and port rules out
    // a key an unrelated flow took after this one's was released.
    return std::memcmp(v.inside_addr, reply.value.nat.new_dst_addr, 16) == 0 &&
           v.inside_port == reply.value.nat.new_dst_port;
}

Status release_reservation(int fd, const nat_port_key& key) {
    if (bpf_map_delete_elem(fd, &key) != 0 && errno != ENOENT)
        return make_error(std::string("cannot delete from map nat_ports: ") + std::strerror(errno));
    return {};
}

std::optional<nat_port_value> lookup_reservation(int fd, const nat_port_key& key) {
    nat_port_value v{};
    if (bpf_map_lookup_elem(fd, &key, &v) != 0) return std::nullopt;
    return v;
}

Result<std::vector<NatReservation>> dump_reservations(int fd) {
    std::vector<NatReservation> out;
    auto s = batch_dump<nat_port_key, nat_port_value>(
        fd, "nat_ports", [&](const nat_port_key& k, const nat_port_value& v) { out.emplace_back(k, v); });
    if (!s) return s.error();
    return out;
}

}  // namespace sluice
