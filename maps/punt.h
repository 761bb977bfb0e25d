/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The punt path: sessions an `inspect` policy admitted are handed to the
 * inspection stage (a transparent proxy inside `sluice run`) instead of being
 * forwarded by XDP. XDP passes their packets to the kernel with a punt_meta in
 * front (bpf_xdp_adjust_meta), or in a per-CPU tc_handoff slot where the
 * metadata area is not available; tc_punt_prog at TC ingress reads it, finds the
 * stage's socket for the packet (the connection's own socket, or for a new
 * flow the stage's listener) and assigns it with bpf_sk_assign, then marks the
 * packet so a policy route delivers it locally.
 */
#ifndef SLUICE_MAPS_PUNT_H
#define SLUICE_MAPS_PUNT_H

#include "abi.h"
#include "screen.h"

#ifndef SLUICE_MAX_RULESETS
#define SLUICE_MAX_RULESETS 256        /* ruleset ids 1..MAX-1; 0 = none */
#endif

enum session_punt_flags {
	SESSION_PUNT_INSPECT = 1 << 0,  /* packets go to the inspection stage */
	/* The stage is handing the TCP connection back (inspect-bytes): with
	 * INSPECT, segments carrying data, SYN or FIN are dropped (their
	 * senders retransmit them after the hand-off) so the stage's sockets
	 * can drain; pure ACKs and RSTs still reach the stage. */
	SESSION_PUNT_HOLD = 1 << 1,
	/* Handed back: forwarded by the fast path with session_splice applied. */
	SESSION_PUNT_SPLICED = 1 << 2,
	/* Admitted by the SYN proxy (screen.h): the SYN to the server is out,
	 * its SYN-ACK has not come back; session_synproxy holds the handshake. */
	SESSION_PUNT_SYNPROXY = 1 << 3,
};

#define PUNT_META_MAGIC 0x5e1cu

/* 8 bytes in front of a punted packet (XDP metadata, at most 32 bytes). */
struct punt_meta {
	__u16 magic;           /* PUNT_META_MAGIC */
	__u16 ruleset_id;
	__u8 reply;            /* the packet travels the responder's direction */
	__u8 pad[3];
};

/* The hand-off record where no metadata area carries it (bpf/hook.bpf.h
 * handoff_slot): the TC pipeline, and generic XDP on a kernel that refuses
 * bpf_xdp_adjust_meta. One per CPU (the tc_handoff map), tagged with the
 * packet it was written for; tc_punt_prog takes it and clears magic. */
struct tc_handoff {
	union {
		struct punt_meta punt;          /* magic PUNT_META_MAGIC */
		struct synproxy_meta synproxy;  /* magic SYNPROXY_META_MAGIC */
		__u8 bytes[sizeof(struct synproxy_meta) > sizeof(struct punt_meta) ? sizeof(struct synproxy_meta)
											 : sizeof(struct punt_meta)];
	};
	__u32 ifindex;   /* the ingress interface */
	__u32 len;       /* the frame's length as the pipeline saw it */
};

/* The single entry of punt_cfg, written by the controller. */
struct punt_config {
	__u32 mark;            /* skb->mark that routes a punted packet locally */
	__u8 stage_up;         /* the stage's listeners are open */
	__u8 overloaded;       /* new flows get their ruleset's fail-mode; open ones go on */
	__be16 tcp_port;       /* the stage's TCP listeners: 127.0.0.1 and ::1 */
	__be16 udp_port;       /* the stage's UDP listeners: 127.0.0.1 and ::1 */
	__u16 pad1;
};

/* punt_rulesets[ruleset id]: what the fast path does with a ruleset's
 * flows while the stage is down. */
struct punt_ruleset {
	__u8 fail_closed;      /* 1: drop them; 0: un-punt them (fast path) */
	__u8 configured;       /* the id names a ruleset of the active config */
	__u8 pad[6];
};

/* punt_stats[ruleset id], per CPU: the fast path's side of inspection. */
struct punt_ruleset_stats {
	__u64 punted_packets;      /* handed to the stage (XDP) */
	__u64 punted_bytes;        /* their L3 bytes */
	__u64 fail_open_packets;   /* stage down, fail-mode open: forwarded */
	__u64 fail_closed_packets; /* stage down, fail-mode closed: dropped */
	__u64 no_socket_packets;   /* TC found no stage socket for the packet */
	__u64 verdict_packets;     /* dropped by a verdict the stage wrote */
};

#endif
