/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Connection tracking sessions. A flow has two entries, one per direction, each
 * keyed by the tuple exactly as packets of that direction appear on the wire
 * (the reply entry is keyed by the post-NAT reply tuple), so an established flow
 * costs one lookup per packet. Both entries carry the full value; state shared
 * by the directions (TCP state) is written to both on the rare transitions.
 */
#ifndef SLUICE_MAPS_SESSION_H
#define SLUICE_MAPS_SESSION_H

#include "abi.h"
#include "nat.h"
#include "punt.h"

/* 16 bytes. For ICMP echo: src_port = identifier on requests, dst_port =
 * identifier on replies (the other port is 0), so reversing a request key
 * yields its reply key. */
struct session_key_v4 {
	__be32 src_addr;
	__be32 dst_addr;
	__be16 src_port;
	__be16 dst_port;
	__u8 protocol;
	__u8 pad[3];
};

/* 40 bytes; same conventions as session_key_v4. */
struct session_key_v6 {
	__be32 src_addr[4];
	__be32 dst_addr[4];
	__be16 src_port;
	__be16 dst_port;
	__u8 protocol;
	__u8 pad[3];
};

/* Cached bpf_fib_lookup result for this direction; valid while generation
 * equals the controller's fib_generation (bumped on route/neighbour/config
 * change). generation 0 means "nothing cached". */
struct session_fib {
	__u32 generation;
	__u32 ifindex;         /* egress interface */
	__u8 dst_mac[6];
	__u8 src_mac[6];
	__u16 mtu;
	__u16 flags;           /* enum session_fib_flags */
};

enum session_fib_flags {
	/* ifindex is in tx_ports (checked when the result was taken): the fast
	 * path redirects without looking it up again. The loader bumps the FIB
	 * generation after it removes a port, so no cached result outlives it. */
	SESSION_FIB_XMIT = 1 << 0,
	/* ifindex is in peer_ports (a veth with its peer in another network
	 * namespace): the TC pipeline hands the packet to the peer
	 * (bpf_redirect_peer); XDP ignores it. */
	SESSION_FIB_PEER = 1 << 1,
};

/* A TCP connection the inspection stage handed back to the fast path after
 * inspect-bytes (docs/inspect.md): the stage had terminated it, so the client
 * and the server each numbered their bytes, timestamps and windows against
 * one of the stage's two sockets. XDP rewrites this direction's packets so
 * each end keeps seeing the numbering it agreed on. Deltas are added modulo
 * 2^32. While the session is still punted, last_tsval follows the sender's
 * newest TCP timestamp, which the stage needs for the hand-off. */
struct session_splice {
	__u32 seq_delta;       /* added to the sequence number */
	__u32 ack_delta;       /* added to the acknowledgment number and SACK blocks */
	__u32 tsval_delta;     /* added to the timestamp option's TSval */
	__u32 tsecr_delta;     /* added to its TSecr */
	__s8 window_shift;     /* window field << shift (>> -shift when negative) */
	__u8 pad[3];
	__u32 last_tsval;      /* punted: the sender's latest TSval (host order) */
};

/* A TCP connection the SYN proxy admitted (maps/screen.h) while it waits
 * for the server's SYN-ACK: what it needs to send (and resend) the SYN to
 * the server and, when the SYN-ACK comes, the splice. */
struct session_synproxy {
	__u32 proxy_isn;       /* the cookie: the sequence number the client knows */
	__u32 client_isn;
	__u32 proxy_tsval;     /* the TSval of the proxy's SYN-ACK (timestamps only) */
	__u32 client_tsval;    /* the client's newest TSval */
	__u16 mss;             /* the client's MSS, as far as the cookie tells */
	__u8 client_wscale;    /* SYNPROXY_F_WSCALE */
	__u8 flags;            /* SYNPROXY_F_* (screen.h) */
	__u16 client_window;   /* the window of the client's ACK (its own scale) */
	__u8 proxy_wscale;     /* the window scale the proxy offered the client */
	__u8 pad;
};

struct session_value {
	__u64 created_ns;      /* bpf_ktime_get_coarse_ns() at creation */
	__u64 last_seen_ns;    /* coarse clock, this direction */
	__u64 packets;         /* this direction */
	__u64 bytes;           /* this direction, L3 length */
	__u32 policy_id;       /* winning policy (config order), or SESSION_POLICY_RELATED */
	__u16 zone_in;         /* zone this direction's packets arrive from */
	__u16 zone_out;        /* zone they leave to */
	__u8 tcp_state;        /* enum tcp_session_state; shared by both entries */
	__u8 flags;            /* SESSION_F_* */
	__u8 punt_flags;       /* SESSION_PUNT_* (punt.h) */
	__u8 verdict;          /* enum session_verdict */
	__u16 ruleset_id;      /* inspection ruleset, 0 = none */
	__u16 pad0;
	struct session_nat nat;
	struct session_fib fib;
	__u32 policy_generation; /* config generation that admitted the flow */
	__u32 pad1;
	union {
		struct session_splice splice;     /* SESSION_PUNT_SPLICED (punt.h) */
		struct session_synproxy synproxy; /* SESSION_PUNT_SYNPROXY */
	};
};

enum session_flags {
	SESSION_F_REPLY = 1 << 0,       /* this entry is the responder's direction */
	SESSION_F_SEEN_REPLY = 1 << 1,  /* the responder has sent at least one packet */
	/* Which sides have sent FIN, so the other side's FIN is recognised. */
	SESSION_F_FIN_INITIATOR = 1 << 2,
	SESSION_F_FIN_RESPONDER = 1 << 3,
	/* The initiator's entry of a flow counted against its source's session
	 * limit (screen.h): whoever removes the flow releases it. */
	SESSION_F_SOURCE_COUNTED = 1 << 4,
	/* The policy that opened the flow logs its end (maps/observe.h):
	 * whoever removes the flow reports it. On both entries. */
	SESSION_F_LOG_CLOSE = 1 << 5,
};

enum session_verdict {
	SESSION_VERDICT_PASS = 0,
	SESSION_VERDICT_DROP = 1,
	SESSION_VERDICT_RESET = 2,
};

/* TCP state, tracked on both directions' entries. */
enum tcp_session_state {
	TCP_SESSION_NONE = 0,       /* not TCP */
	TCP_SESSION_SYN_SENT = 1,   /* SYN from the initiator */
	TCP_SESSION_SYN_RECV = 2,   /* SYN-ACK from the responder */
	TCP_SESSION_ESTABLISHED = 3,
	TCP_SESSION_FIN_WAIT = 4,   /* one side has sent FIN */
	TCP_SESSION_CLOSING = 5,    /* both sides have sent FIN */
	TCP_SESSION_TIME_WAIT = 6,  /* last ACK after both FINs */
	TCP_SESSION_CLOSED = 7,     /* RST seen */
	TCP_SESSION_STATE_COUNT,
};

#define SESSION_POLICY_RELATED 0xffffffffu

#endif
