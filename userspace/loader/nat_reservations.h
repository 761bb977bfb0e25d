// Source-NAT port reservations (pinned map nat_ports, maps/nat.h): which key a
// flow holds, reading them all, and releasing one when its flow is deleted.
// The datapath inserts them; whoever deletes a flow deletes its reservation,
// or the translated port stays taken until the table fills.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "common/result.h"
#include "loader/session_table.h"

namespace sluice {

using NatReservation = std::pair<nat_port_key, nat_port_value>;

// The reservation an initiator entry holds (no SESSION_F_REPLY, with
// SESSION_NAT_PORT_HELD): {new_src_addr, new_src_port, protocol, family}.
std::optional<nat_port_key> held_reservation(const SessionEntry& e);

// For a reply entry left without its initiator: the reservation the flow may
// have held (the reply's destination is the translated source). Only a
// reservation whose inside host is this flow's original source is the flow's;
// reservation_belongs_to() says so.
std::optional<nat_port_key> orphan_reply_reservation(const SessionEntry& reply);
bool reservation_belongs_to(const nat_port_value& v, const SessionEntry& reply);

// Deletes one reservation; a missing key is not an error.
Status release_reservation(int fd, const nat_port_key& key);
std::optional<nat_port_value> lookup_reservation(int fd, const nat_port_key& key);

// Every reservation (one batched dump).
Result<std::vector<NatReservation>> dump_reservations(int fd);

}  // namespace sluice
