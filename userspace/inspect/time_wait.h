// TIME_WAIT sockets the stage's relays leave behind. The side of a TCP
// connection that closes first ends in TIME_WAIT, holding the 4-tuple for
// 60 s. When that side is one of the stage's sockets, the tuple is the
// client's own:
//   - the client-side socket (the server closed first): local is the original
//     server address, remote the client. A new SYN from the same client port
//     is assigned by tc_punt_prog to the stage's listener, which cannot hash
//     its request socket over the TIME_WAIT entry: the SYN is dropped;
//   - the server-side socket (the client closed first): local is the client's
//     address (or its NAT translation), remote the server. The next relay
//     from the same client port binds and connects from that tuple, which
//     the kernel allows over TIME_WAIT only if the old connection carried TCP
//     timestamps.
// So when a relay ends normally (FIN both ways, every byte passed on), the
// stage removes those TIME_WAIT sockets with sock_diag SOCK_DESTROY (as
// `ss -K` does; needs CONFIG_INET_DIAG_DESTROY and CAP_NET_ADMIN).
//
// What is given up: TIME_WAIT would re-acknowledge a peer's retransmitted
// FIN when our last ACK was lost, and absorb stray segments of the old
// connection. Without it, tc_punt_prog finds no stage socket for them and
// drops them (counted as no_socket_packets): the peer, already closed,
// retransmits its FIN until it gives up. Stray old segments reaching a new
// connection on the tuple are the usual risk of reusing a tuple early, which
// any client choosing its own port takes anyway.
#pragma once

#include "common/result.h"
#include "inspect/sockets.h"
#include "loader/session_table.h"

namespace sluice::inspect {

// What remove_time_wait found for a tuple.
enum class TimeWaitOutcome {
    removed,  // it was in TIME_WAIT and is gone now
    none,     // no socket has the tuple (any more)
    pending,  // FIN_WAIT1/FIN_WAIT2/CLOSING: our FIN is not acknowledged yet, TIME_WAIT is still to come
    left,     // any other state (LAST_ACK: the peer closed first, no TIME_WAIT follows), left alone
};

// Removes the TCP socket of this netns with exactly this tuple (local and
// remote as that socket sees them) if, and only if, it is in TIME_WAIT. IPv4
// and IPv6. One netlink socket per calling thread, kept open.
Result<TimeWaitOutcome> remove_time_wait(const Endpoint& local, const Endpoint& remote);

// After a relay closed both legs at its normal end: removes the TIME_WAIT
// socket either leg left. A leg whose TIME_WAIT is still to come is retried
// in the background until it appears or the socket is gone. Failures are
// logged once (then at 10, 100, ... failures), never returned: the relay is
// over either way.
void remove_relay_time_waits(const SessionEntry& initiator);

}  // namespace sluice::inspect
