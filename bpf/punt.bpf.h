/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The punt path (maps/punt.h): XDP hands an inspected session's packets to
 * the kernel with a punt_meta; tc_punt_prog assigns them to the inspection
 * stage's sockets. Punted packets are never translated here: the stage's
 * sockets carry the flow's NAT in their addresses.
 */
#ifndef SLUICE_BPF_PUNT_H
#define SLUICE_BPF_PUNT_H

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "maps.bpf.h"
#include "conntrack.bpf.h"
#include "hook.bpf.h"
#include "egress.bpf.h"

#define PUNT_CONTINUE 0x100 /* no verdict of either hook */

static __always_inline struct punt_config *punt_config(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&punt_cfg, &key);
}

static __always_inline struct punt_ruleset_stats *punt_ruleset_stats(__u16 ruleset_id)
{
	__u32 key = ruleset_id;

	return bpf_map_lookup_elem(&punt_stats, &key);
}

/* Fail-open: the flow leaves the stage for good (a proxied TCP connection
 * cannot be resumed by it later), on both entries. */
static __always_inline void punt_release(struct packet_ctx *pc, struct session_value *s)
{
	union session_key peer;
	struct session_value *other;

	s->punt_flags &= ~SESSION_PUNT_INSPECT;
	peer_key(pc, s, &peer);
	other = session_lookup(pc->family, &peer);
	if (other)
		other->punt_flags &= ~SESSION_PUNT_INSPECT;
}

static __always_inline int punt_fails_open(__u16 ruleset_id)
{
	__u32 key = ruleset_id;
	struct punt_ruleset *rs = bpf_map_lookup_elem(&punt_rulesets, &key);

	/* An unknown ruleset (the config changed under the flow) fails closed. */
	return rs && rs->configured && !rs->fail_closed;
}

/* The packets that would reach the stage's listener: a TCP SYN, a UDP
 * datagram of the initiator. */
static __always_inline int punt_opens_flow(const struct packet_ctx *pc)
{
	if (pc->protocol == IPPROTO_TCP)
		return (pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN;
	return pc->protocol == IPPROTO_UDP;
}

/* A packet of a punted session: passed with its punt_meta handed off, dropped, or
 * PUNT_CONTINUE when the flow takes the fast path (stage down, fail-open).
 * A new flow (its first packet) is also turned away while the stage says it
 * is overloaded. */
static __always_inline int xdp_punt(hook_ctx *ctx, struct packet_ctx *pc, struct session_value *s,
				    int new_flow)
{
	struct punt_config *cfg = punt_config();
	struct punt_ruleset_stats *st = punt_ruleset_stats(s->ruleset_id);
	struct punt_meta *meta;

	if ((s->ruleset_id & SLUICE_EGRESS_DNS_RULESET_MASK) == SLUICE_EGRESS_DNS_RULESET_BASE) {
		/* Steered DNS (egress.bpf.h): only the proxy answers it. */
		struct egress_config *egress = egress_config();

		if (!egress || !egress->proxy_up) {
			count_bytes(STAT_DROP_EGRESS_PROXY_DOWN, pc->l3_len);
			return HOOK_DROP;
		}
	} else if (!cfg || !cfg->stage_up || (new_flow && cfg->overloaded)) {
		if (punt_fails_open(s->ruleset_id)) {
			punt_release(pc, s);
			if (st)
				st->fail_open_packets++;
			count(STAT_INSPECT_FAIL_OPEN);
			return PUNT_CONTINUE;
		}
		if (st)
			st->fail_closed_packets++;
		count_bytes(STAT_DROP_INSPECT_FAIL_CLOSED, pc->l3_len);
		return HOOK_DROP;
	}
	/* The stage is draining its sockets to hand the connection back: what
	 * would add to them waits for its sender's retransmission (after the
	 * hand-off). Only while the stage is up: a stage that died mid-hand-off
	 * leaves the flow to its fail-mode above. */
	if ((s->punt_flags & SESSION_PUNT_HOLD) && pc->protocol == IPPROTO_TCP &&
	    (pc->l4_payload_len || pc->frag != FRAG_NONE || (pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_FIN)))) {
		count_bytes(STAT_DROP_INSPECT_HANDOFF_HOLD, pc->l3_len);
		return HOOK_DROP;
	}
	meta = hook_handoff(ctx, sizeof(*meta));
	if (!meta) {
		count_bytes(STAT_DROP_INTERNAL, pc->l3_len);
		return HOOK_DROP;
	}
	meta->magic = PUNT_META_MAGIC;
	meta->ruleset_id = s->ruleset_id;
	meta->reply = pc->session_reply;
	meta->pad[0] = meta->pad[1] = meta->pad[2] = 0;
	if (st) {
		st->punted_packets++;
		st->punted_bytes += pc->l3_len;
	}
	count(STAT_PUNT_INSPECT);
	return HOOK_PASS_HANDOFF;
}

/* TCP state for a punted session. Its two TCP connections end in the
 * stage's sockets, whose kernel stack validates every segment; the session
 * only follows the flow's life for timeouts (the client's ACK may come
 * before the server's SYN-ACK, which tcp_track would refuse). */
static __always_inline int punt_tcp_track(struct packet_ctx *pc, struct session_value *s)
{
	int rc = tcp_track(pc, s);

	if (rc == TCP_TRACK_NEW)
		return rc;
	if (s->tcp_state == TCP_SESSION_SYN_SENT && !(pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_RST)))
		tcp_set_state(pc, s, TCP_SESSION_ESTABLISHED, 0);
	return TCP_TRACK_OK;
}

static __always_inline void punt_tuple(const struct packet_ctx *pc, struct bpf_sock_tuple *t)
{
	if (pc->family == SLUICE_FAMILY_IPV4) {
		t->ipv4.saddr = pc->key.v4.src_addr;
		t->ipv4.daddr = pc->key.v4.dst_addr;
		t->ipv4.sport = pc->key.v4.src_port;
		t->ipv4.dport = pc->key.v4.dst_port;
	} else {
		__builtin_memcpy(t->ipv6.saddr, pc->key.v6.src_addr, 16);
		__builtin_memcpy(t->ipv6.daddr, pc->key.v6.dst_addr, 16);
		t->ipv6.sport = pc->key.v6.src_port;
		t->ipv6.dport = pc->key.v6.dst_port;
	}
}

/* The tuple that finds the stage's listener: the packet's source, the
 * listener's loopback address and port. */
static __always_inline void punt_listener_tuple(const struct packet_ctx *pc, __be16 port, struct bpf_sock_tuple *t)
{
	if (pc->family == SLUICE_FAMILY_IPV4) {
		t->ipv4.daddr = bpf_htonl(0x7f000001);
		t->ipv4.dport = port;
	} else {
		__builtin_memset(t->ipv6.daddr, 0, 16);
		t->ipv6.daddr[3] = bpf_htonl(1);
		t->ipv6.dport = port;
	}
}

static __always_inline __u32 punt_tuple_size(const struct packet_ctx *pc)
{
	return pc->family == SLUICE_FAMILY_IPV4 ? sizeof(((struct bpf_sock_tuple *)0)->ipv4)
						: sizeof(((struct bpf_sock_tuple *)0)->ipv6);
}

/* The stage's socket for a punted TCP packet: the connection's own (either
 * leg, any state but LISTEN), else for a SYN of the initiator the listener.
 * NULL when the stage has none. The caller releases it. */
static __always_inline struct bpf_sock *punt_tcp_socket(struct __sk_buff *skb, struct packet_ctx *pc,
							 __be16 listener_port, int reply)
{
	struct bpf_sock_tuple t = {};
	__u32 size = punt_tuple_size(pc);
	struct bpf_sock *sk;
	int syn = (pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN;

	punt_tuple(pc, &t);
	sk = bpf_skc_lookup_tcp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (sk) {
		/* A SYN reusing the tuple of a connection the stage closed goes
		 * to the listener: the kernel would look for one on the
		 * original destination, where the stage has none. */
		if (sk->state != BPF_TCP_LISTEN && !(syn && sk->state == BPF_TCP_TIME_WAIT))
			return sk;
		bpf_sk_release(sk);
	}
	if (reply || !syn)
		return 0;
	punt_listener_tuple(pc, listener_port, &t);
	sk = bpf_skc_lookup_tcp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (sk && sk->state != BPF_TCP_LISTEN) {
		bpf_sk_release(sk);
		return 0;
	}
	return sk;
}

/* UDP: the flow's connected socket (the stage makes one per leg), else for
 * the initiator's datagrams the listener. The DNS proxy has no socket per
 * flow (listener_only): its reply sockets are bound to resolvers' addresses
 * and port 53, where the first lookup would find them. */
static __always_inline struct bpf_sock *punt_udp_socket(struct __sk_buff *skb, struct packet_ctx *pc,
							 __be16 listener_port, int reply, int listener_only)
{
	struct bpf_sock_tuple t = {};
	__u32 size = punt_tuple_size(pc);
	struct bpf_sock *sk;

	punt_tuple(pc, &t);
	if (reply)
		return listener_only ? 0 : bpf_sk_lookup_udp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!listener_only) {
		sk = bpf_sk_lookup_udp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
		if (sk)
			return sk;
	}
	punt_listener_tuple(pc, listener_port, &t);
	return bpf_sk_lookup_udp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
}

#endif
