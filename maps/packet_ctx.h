/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parser learned about a packet, handed from one tail-called program
 * to the next through the per-CPU pkt_scratch map. Only bpf/ reads it, but
 * the map is pinned, so its layout is part of the ABI (SLUICE_ABI_VERSION):
 * userspace/abi_layout.cpp pins its size.
 */
#ifndef SLUICE_MAPS_PACKET_CTX_H
#define SLUICE_MAPS_PACKET_CTX_H

#include "sluice_maps.h"

enum frag_kind {
	FRAG_NONE = 0,
	FRAG_FIRST = 1,    /* offset 0, more to come: carries the L4 header */
	FRAG_LATER = 2,    /* offset > 0: no L4 header */
};

union session_key {
	struct session_key_v4 v4;
	struct session_key_v6 v6;
};

struct packet_ctx {
	union session_key key;        /* this packet's tuple as on the wire */
	union session_key inner_key;  /* ICMP errors: the quoted packet's tuple */
	struct session_fib fib;       /* egress for this packet, when fib_valid */
	struct session_splice splice; /* a spliced TCP session's rewrite (xdp_splice_prog) */
	struct session_synproxy synproxy_state; /* the SYN proxy's handshake (synproxy.bpf.h) */
	struct address_limit_key limit_key; /* screen.bpf.h's map keys and new values: */
	struct address_limit limit_zero;    /* here rather than on the stack */
	struct scan_state scan_zero;
	struct session_nat nat;       /* translation for this packet (flags 0: none);
	                               * for ICMP errors, that of the entry the error
	                               * travels with */
	__u32 tcp_seq;
	__u32 tcp_ack;
	__u32 frag_id;                /* network order; IPv4 ids in the low 16 bits */
	__u32 policy_id;
	__u16 l3_off;
	__u16 l4_off;                 /* 0 for later fragments */
	__u16 l3_len;                 /* IPv4 total length / 40 + IPv6 payload length */
	__u16 l4_payload_len;         /* TCP payload bytes */
	__u16 frag_start;             /* fragments: bytes of the fragmentable part they carry, */
	__u16 frag_end;               /* [frag_start, frag_end) */
	__u16 inner_l3_off;           /* ICMP errors: the quoted IP header */
	__u16 inner_l4_off;           /* ICMP errors: the quoted L4 header */
	__u16 vlan_id;
	__u16 zone_in;
	__u16 zone_out;
	__u8 family;                  /* SLUICE_FAMILY_IPV4 / _IPV6 */
	__u8 protocol;
	__u8 tcp_flags;
	__u8 frag;                    /* enum frag_kind */
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 icmp_error;              /* an ICMP/ICMPv6 error; inner_key is valid */
	__u8 ttl;                     /* TTL / hop limit */
	__u8 fib_valid;               /* fib holds a usable result */
	__u8 fib_stale_session;       /* forward must refresh the session's cache */
	__u8 link_local;              /* NDP/MLD or link-scope: for the kernel */
	__u8 session_reply;           /* packet matched its session's reply entry */
	__u8 forward_checked;         /* xdp_nat_prog already ran forward_pass_reason */
	__u8 synproxy;                /* enum synproxy_stage: what xdp_synproxy_prog does */
	__u8 synproxy_refusal;        /* SYNPROXY_REFUSE: the stat_reason the flow was refused under */
	__u8 source_counted;          /* the new session counts against its source (screen.bpf.h) */
	__u8 ha_standby;              /* arrived on a group this node does not carry (maps/ha.h) */
};

#endif
