/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sessions: lookup by the tuple on the wire, creation of both direction
 * entries, and the TCP state machine. Expiry is the controller's GC (it sees
 * both entries of a flow; a one-way UDP flow keeps only one entry fresh).
 */
#ifndef SLUICE_BPF_CONNTRACK_H
#define SLUICE_BPF_CONNTRACK_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "ha.bpf.h"
#include "observe.bpf.h"

enum tcp_track_result {
	TCP_TRACK_OK = 0,
	TCP_TRACK_INVALID = 1,   /* drop: e.g. a SYN from the responder */
	TCP_TRACK_NEW = 2,       /* a fresh SYN reusing a closed tuple: classify again */
};

/* The tuple of a packet travelling the other way. */
static __always_inline void reverse_tuple(__u8 family, const union session_key *in, union session_key *out)
{
	__builtin_memset(out, 0, sizeof(*out));
	if (family == SLUICE_FAMILY_IPV4) {
		out->v4.src_addr = in->v4.dst_addr;
		out->v4.dst_addr = in->v4.src_addr;
		out->v4.src_port = in->v4.dst_port;
		out->v4.dst_port = in->v4.src_port;
		out->v4.protocol = in->v4.protocol;
	} else {
		__builtin_memcpy(out->v6.src_addr, in->v6.dst_addr, 16);
		__builtin_memcpy(out->v6.dst_addr, in->v6.src_addr, 16);
		out->v6.src_port = in->v6.dst_port;
		out->v6.dst_port = in->v6.src_port;
		out->v6.protocol = in->v6.protocol;
	}
}

static __always_inline void reverse_key(const struct packet_ctx *pc, union session_key *out)
{
	reverse_tuple(pc->family, &pc->key, out);
}

/* The key of the other direction's entry: the reverse of the tuple packets
 * of this direction leave with (maps/nat.h). */
static __always_inline void nat_reverse(__u8 family, __u8 protocol, const struct session_nat *nat,
					union session_key *out)
{
	__builtin_memset(out, 0, sizeof(*out));
	if (family == SLUICE_FAMILY_IPV4) {
		out->v4.src_addr = nat->new_dst_addr[0];
		out->v4.dst_addr = nat->new_src_addr[0];
		out->v4.src_port = nat->new_dst_port;
		out->v4.dst_port = nat->new_src_port;
		out->v4.protocol = protocol;
	} else {
		__builtin_memcpy(out->v6.src_addr, nat->new_dst_addr, 16);
		__builtin_memcpy(out->v6.dst_addr, nat->new_src_addr, 16);
		out->v6.src_port = nat->new_dst_port;
		out->v6.dst_port = nat->new_src_port;
		out->v6.protocol = protocol;
	}
}

#define SESSION_NAT_ANY (SESSION_NAT_SRC | SESSION_NAT_DST)

static __always_inline void peer_key(const struct packet_ctx *pc, const struct session_value *s,
				     union session_key *out)
{
	if (s->nat.flags & SESSION_NAT_ANY)
		nat_reverse(pc->family, pc->protocol, &s->nat, out);
	else
		reverse_key(pc, out);
}

static __always_inline struct session_value *session_lookup(__u8 family, const union session_key *key)
{
	if (family == SLUICE_FAMILY_IPV4)
		return bpf_map_lookup_elem(&sessions_v4, &key->v4);
	return bpf_map_lookup_elem(&sessions_v6, &key->v6);
}

static __always_inline int session_update(__u8 family, const union session_key *key,
					  const struct session_value *value)
{
	if (family == SLUICE_FAMILY_IPV4)
		return bpf_map_update_elem(&sessions_v4, &key->v4, value, BPF_ANY);
	return bpf_map_update_elem(&sessions_v6, &key->v6, value, BPF_ANY);
}

static __always_inline void session_delete(__u8 family, const union session_key *key)
{
	if (family == SLUICE_FAMILY_IPV4)
		bpf_map_delete_elem(&sessions_v4, &key->v4);
	else
		bpf_map_delete_elem(&sessions_v6, &key->v6);
}

static __always_inline void nat_port_release(__u8 family, __u8 protocol, const struct session_nat *nat)
{
	struct nat_port_key pk = {};

	if (!(nat->flags & SESSION_NAT_PORT_HELD))
		return;
	__builtin_memcpy(pk.addr, nat->new_src_addr, 16);
	pk.port = nat->new_src_port;
	pk.protocol = protocol;
	pk.family = family;
	bpf_map_delete_elem(&nat_ports, &pk);
}

/* Creates both entries of a new flow admitted by policy_id, with pc->nat's
 * translation and extra SESSION_F_* flags on both. Returns 0, or the drop
 * reason (nothing is left behind; a port reservation in pc->nat is
 * released). */
static __always_inline int session_create(struct packet_ctx *pc, const struct runtime_config *cfg,
					  __u32 policy_id, __u16 ruleset_id, __u8 punt_flags, __u8 flags, __u64 now)
{
	__u32 slot = 0;
	struct session_value *v = bpf_map_lookup_elem(&session_build, &slot);
	union session_key reply;
	__u8 nat = pc->nat.flags & SESSION_NAT_ANY;

	if (!v) {
		nat_port_release(pc->family, pc->protocol, &pc->nat);
		return STAT_DROP_INTERNAL;
	}
	__builtin_memset(v, 0, sizeof(*v));

	v->created_ns = now;
	v->last_seen_ns = now;
	v->packets = 1;
	v->bytes = pc->l3_len;
	v->policy_id = policy_id;
	v->zone_in = pc->zone_in;
	v->zone_out = pc->zone_out;
	v->tcp_state = pc->protocol == IPPROTO_TCP ? TCP_SESSION_SYN_SENT : TCP_SESSION_NONE;
	v->punt_flags = punt_flags;
	v->ruleset_id = ruleset_id;
	v->policy_generation = cfg->config_generation;
	if (nat)
		v->nat = pc->nat;
	if (pc->fib_valid) {
		v->fib = pc->fib;
		v->fib.generation = cfg->fib_generation;
	}
	if (punt_flags & SESSION_PUNT_SYNPROXY)
		v->synproxy = pc->synproxy_state;
	v->flags = flags;
	if (pc->source_counted)
		v->flags |= SESSION_F_SOURCE_COUNTED;
	if (session_update(pc->family, &pc->key, v))
		goto full;

	if (nat) {
		struct session_nat *r = &v->nat;

		nat_reverse(pc->family, pc->protocol, &pc->nat, &reply);
		/* Packets arriving with the reply key leave with the original
		 * tuple reversed: the reply changes its source where the
		 * initiator's packets changed their destination. */
		if (pc->family == SLUICE_FAMILY_IPV4) {
			__builtin_memset(r, 0, sizeof(*r));
			r->new_src_addr[0] = pc->key.v4.dst_addr;
			r->new_dst_addr[0] = pc->key.v4.src_addr;
			r->new_src_port = pc->key.v4.dst_port;
			r->new_dst_port = pc->key.v4.src_port;
		} else {
			__builtin_memcpy(r->new_src_addr, pc->key.v6.dst_addr, 16);
			__builtin_memcpy(r->new_dst_addr, pc->key.v6.src_addr, 16);
			r->new_src_port = pc->key.v6.dst_port;
			r->new_dst_port = pc->key.v6.src_port;
		}
		r->flags = ((nat & SESSION_NAT_DST) ? SESSION_NAT_SRC : 0) |
			   ((nat & SESSION_NAT_SRC) ? SESSION_NAT_DST : 0);
	} else {
		reverse_key(pc, &reply);
	}
	v->packets = 0;
	v->bytes = 0;
	v->zone_in = pc->zone_out;
	v->zone_out = pc->zone_in;
	v->flags = SESSION_F_REPLY | flags;
	__builtin_memset(&v->fib, 0, sizeof(v->fib));
	/* A translated reply tuple must not take over another flow's entry. */
	if (pc->family == SLUICE_FAMILY_IPV4) {
		if (bpf_map_update_elem(&sessions_v4, &reply.v4, v, nat ? BPF_NOEXIST : BPF_ANY))
			goto undo;
	} else {
		if (bpf_map_update_elem(&sessions_v6, &reply.v6, v, nat ? BPF_NOEXIST : BPF_ANY))
			goto undo;
	}
	ha_note_flow(pc->family, &pc->key);
	return 0;
undo:
	session_delete(pc->family, &pc->key);
	if (nat) {
		nat_port_release(pc->family, pc->protocol, &pc->nat);
		return STAT_DROP_NAT_TUPLE_IN_USE;
	}
	return STAT_DROP_SESSION_TABLE_FULL;
full:
	nat_port_release(pc->family, pc->protocol, &pc->nat);
	return STAT_DROP_SESSION_TABLE_FULL;
}

/* A fresh SYN reuses a closed flow's tuple: the old flow goes (its other
 * entry and its port), the packet is classified as new. */
static __always_inline void session_retire_peer(const struct runtime_config *cfg, struct packet_ctx *pc,
						struct session_value *s, __u32 ifindex, __u64 now)
{
	union session_key peer;

	peer_key(pc, s, &peer);
	if (s->flags & SESSION_F_LOG_CLOSE)
		flow_log_close(cfg, pc, s, session_lookup(pc->family, &peer), ifindex, now);
	session_delete(pc->family, &peer);
	nat_port_release(pc->family, pc->protocol, &s->nat);
	s->nat.flags = 0;
}

/* The session's cached egress, when still valid for the current FIB
 * generation; otherwise forward must refresh it. */
static __always_inline void session_fib_to_packet(struct packet_ctx *pc, const struct session_value *s,
						  const struct runtime_config *cfg)
{
	if (s->fib.generation && s->fib.generation == cfg->fib_generation) {
		pc->fib = s->fib;
		pc->fib_valid = 1;
	} else {
		pc->fib_stale_session = 1;
	}
}

/* Plain adds, not atomics: a flow direction's packets arrive on one receive
 * queue, so one CPU at a time writes its entry (each direction has its own).
 * Two CPUs racing (a queue change mid-flow) can lose an increment of a
 * statistic, never a verdict; the locked adds cost 15 % of an established
 * packet (docs/datapath.md). */
static __always_inline void session_account(struct session_value *s, const struct packet_ctx *pc, __u64 now)
{
	s->packets += 1;
	s->bytes += pc->l3_len;
	if (s->last_seen_ns != now)
		s->last_seen_ns = now;
}

/* Writes a TCP state change to this entry and to the other direction's. */
static __always_inline void tcp_set_state(struct packet_ctx *pc, struct session_value *s,
					  __u8 state, __u8 set_flags)
{
	union session_key other;
	struct session_value *peer;

	s->tcp_state = state;
	s->flags |= set_flags;
	peer_key(pc, s, &other);
	peer = session_lookup(pc->family, &other);
	if (peer) {
		peer->tcp_state = state;
		peer->flags |= set_flags;
	}
	ha_note_flow(pc->family, &pc->key);
}

/* The TCP state machine for a packet that hit session entry s. */
static __always_inline int tcp_track(struct packet_ctx *pc, struct session_value *s)
{
	__u8 flags = pc->tcp_flags;
	__u8 state = s->tcp_state;
	int reply = s->flags & SESSION_F_REPLY;
	__u8 fin_mine = reply ? SESSION_F_FIN_RESPONDER : SESSION_F_FIN_INITIATOR;
	__u8 fin_other = reply ? SESSION_F_FIN_INITIATOR : SESSION_F_FIN_RESPONDER;

	if (flags & TCP_FLAG_RST) {
		if (state != TCP_SESSION_CLOSED)
			tcp_set_state(pc, s, TCP_SESSION_CLOSED, 0);
		return TCP_TRACK_OK;
	}
	if (flags & TCP_FLAG_SYN) {
		if (!(flags & TCP_FLAG_ACK)) {
			if (reply)
				return TCP_TRACK_INVALID;
			if (state == TCP_SESSION_TIME_WAIT || state == TCP_SESSION_CLOSED)
				return TCP_TRACK_NEW;
			if (state == TCP_SESSION_SYN_SENT || state == TCP_SESSION_SYN_RECV)
				return TCP_TRACK_OK; /* retransmitted SYN */
			return TCP_TRACK_INVALID;
		}
		/* SYN-ACK: only the responder sends it. */
		if (!reply)
			return TCP_TRACK_INVALID;
		if (state == TCP_SESSION_SYN_SENT)
			tcp_set_state(pc, s, TCP_SESSION_SYN_RECV, SESSION_F_SEEN_REPLY);
		else if (state != TCP_SESSION_SYN_RECV && state != TCP_SESSION_ESTABLISHED)
			return TCP_TRACK_INVALID;
		return TCP_TRACK_OK;
	}
	/* No SYN from here on. */
	if (state == TCP_SESSION_SYN_SENT)
		return TCP_TRACK_INVALID; /* nothing but SYNs before the SYN-ACK */
	if (flags & TCP_FLAG_FIN) {
		if (s->flags & fin_other)
			tcp_set_state(pc, s, TCP_SESSION_CLOSING, fin_mine);
		else if (!(s->flags & fin_mine))
			tcp_set_state(pc, s, TCP_SESSION_FIN_WAIT, fin_mine);
		return TCP_TRACK_OK;
	}
	if (state == TCP_SESSION_SYN_RECV && !reply && (flags & TCP_FLAG_ACK))
		tcp_set_state(pc, s, TCP_SESSION_ESTABLISHED, 0);
	else if (state == TCP_SESSION_CLOSING && (flags & TCP_FLAG_ACK))
		tcp_set_state(pc, s, TCP_SESSION_TIME_WAIT, 0);
	return TCP_TRACK_OK;
}

#endif
