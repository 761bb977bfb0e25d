#include "inspect/tcp_handoff.h"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace sluice::inspect {
namespace {

#ifndef TCPI_OPT_USEC_TS
#define TCPI_OPT_USEC_TS 64
#endif

Error sock_error(const char* what) { return errno_error(what, errno); }

Result<uint32_t> queue_seq(int fd, int queue) {
    if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)) != 0)
        return sock_error("TCP_REPAIR_QUEUE");
    uint32_t seq = 0;
    socklen_t len = sizeof(seq);
    if (getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq, &len) != 0) return sock_error("TCP_QUEUE_SEQ");
    return seq;
}

int8_t shift_between(uint8_t sender_scale, uint8_t receiver_expects) {
    return static_cast<int8_t>(static_cast<int>(sender_scale) - static_cast<int>(receiver_expects));
}

}  // namespace

Result<LegOptions> leg_options(int fd) {
    tcp_info info{};
    socklen_t len = sizeof(info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return sock_error("TCP_INFO");
    LegOptions o;
    o.timestamps = info.tcpi_options & TCPI_OPT_TIMESTAMPS;
    o.sack = info.tcpi_options & TCPI_OPT_SACK;
    o.usec_timestamps = info.tcpi_options & TCPI_OPT_USEC_TS;
    if (info.tcpi_options & TCPI_OPT_WSCALE) {
        o.snd_wscale = info.tcpi_snd_wscale;
        o.rcv_wscale = info.tcpi_rcv_wscale;
    }
    return o;
}

std::optional<std::string> splice_refusal(const LegOptions& c, const LegOptions& s) {
    // An end that agreed timestamps expects them on every segment (and one
    // that did not would be handed options it never asked for); SACK blocks
    // the same. Window scales differ freely: XDP rescales the field.
    if (c.timestamps != s.timestamps) return std::string("TCP timestamps on one leg only");
    if (c.sack != s.sack) return std::string("SACK on one leg only");
    if (c.usec_timestamps || s.usec_timestamps) return std::string("microsecond TCP timestamps");
    return std::nullopt;
}

bool leg_drained(int fd) {
    int unread = 0, unacked = 0;
    if (ioctl(fd, SIOCINQ, &unread) != 0 || ioctl(fd, SIOCOUTQ, &unacked) != 0) return false;
    return unread == 0 && unacked == 0;
}

Result<LegNumbers> freeze_leg(int fd) {
    int on = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)) != 0) return sock_error("TCP_REPAIR");
    LegNumbers n;
    auto snd = queue_seq(fd, TCP_SEND_QUEUE);
    if (!snd) return snd.error();
    auto rcv = queue_seq(fd, TCP_RECV_QUEUE);
    if (!rcv) return rcv.error();
    n.snd_nxt = snd.value();
    n.rcv_nxt = rcv.value();
    socklen_t len = sizeof(n.ts_now);
    if (getsockopt(fd, IPPROTO_TCP, TCP_TIMESTAMP, &n.ts_now, &len) != 0) return sock_error("TCP_TIMESTAMP");
    auto o = leg_options(fd);
    if (!o) return o.error();
    n.snd_wscale = o->snd_wscale;
    n.rcv_wscale = o->rcv_wscale;
    return n;
}

void thaw_leg(int fd) {
    int off = 0;
    setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off));
}

SplicePair splice_between(const LegNumbers& cl, const LegNumbers& sl, uint32_t client_tsval, uint32_t server_tsval) {
    // cl is the stage's socket facing the client, sl the one facing the
    // server. Sequence numbers: the client's byte k is the server leg's byte
    // k, and the reverse. Timestamps: each end's clock continues from the
    // leg's current value, so they never go back for the receiver (PAWS).
    // Echoed timestamps move back by the other direction's offset.
    SplicePair p;
    session_splice& c2s = p.client_to_server;
    session_splice& s2c = p.server_to_client;
    c2s.seq_delta = sl.snd_nxt - cl.rcv_nxt;
    c2s.ack_delta = sl.rcv_nxt - cl.snd_nxt;
    s2c.seq_delta = cl.snd_nxt - sl.rcv_nxt;
    s2c.ack_delta = cl.rcv_nxt - sl.snd_nxt;
    c2s.tsval_delta = sl.ts_now - client_tsval;
    s2c.tsval_delta = cl.ts_now - server_tsval;
    c2s.tsecr_delta = 0u - s2c.tsval_delta;
    s2c.tsecr_delta = 0u - c2s.tsval_delta;
    // The client's window field is in the scale it announced (cl's send
    // scale); the server reads it in the scale sl announced.
    c2s.window_shift = shift_between(cl.snd_wscale, sl.rcv_wscale);
    s2c.window_shift = shift_between(sl.snd_wscale, cl.rcv_wscale);
    return p;
}

}  // namespace sluice::inspect
