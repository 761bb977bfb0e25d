// Handing a relayed TCP connection back to the fast path (inspect-bytes).
//
// The stage terminated the connection: the client agreed sequence numbers,
// timestamps and a window scale with the stage's client-side socket, the
// server with its server-side socket. Once both sockets are drained (every
// byte read, passed on and acknowledged) the two byte streams line up, and
// the difference between the legs is a constant per field. XDP then forwards
// the connection and adds those constants (bpf/tcp_splice.bpf.h); the stage's
// sockets are closed without a packet (TCP_REPAIR).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::inspect {

// What the splice needs from one of the stage's sockets.
struct LegNumbers {
    uint32_t snd_nxt = 0;     // next sequence number it sends (all of it acknowledged)
    uint32_t rcv_nxt = 0;     // next sequence number it expects
    uint32_t ts_now = 0;      // the TSval it would send now
    uint8_t snd_wscale = 0;   // the peer's window scale (its windows are << this)
    uint8_t rcv_wscale = 0;   // its own window scale, as announced to the peer
};

// The connection's TCP options on one socket, for the compatibility check.
struct LegOptions {
    bool timestamps = false;
    bool sack = false;
    bool usec_timestamps = false;
    uint8_t snd_wscale = 0;
    uint8_t rcv_wscale = 0;
};

Result<LegOptions> leg_options(int fd);

// Why the two legs cannot be spliced (the fields XDP cannot translate), or
// nothing when they can: both or neither use timestamps and SACK.
std::optional<std::string> splice_refusal(const LegOptions& client_leg, const LegOptions& server_leg);

// Nothing unread, nothing unsent or unacknowledged on the socket.
bool leg_drained(int fd);

// Puts the socket in TCP_REPAIR (it sends nothing from now on, not even on
// close) and reads its numbers.
Result<LegNumbers> freeze_leg(int fd);
// Leaves TCP_REPAIR again (the hand-off was called off).
void thaw_leg(int fd);

struct SplicePair {
    session_splice client_to_server{};  // for the initiator's entry
    session_splice server_to_client{};  // for the reply entry
};

// The per-direction constants. client_tsval / server_tsval: each end's newest
// TSval as XDP saw it (session_splice.last_tsval).
SplicePair splice_between(const LegNumbers& client_leg, const LegNumbers& server_leg, uint32_t client_tsval,
                          uint32_t server_tsval);

}  // namespace sluice::inspect
