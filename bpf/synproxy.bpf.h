/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The SYN proxy (maps/screen.h, docs/host-protection.md). For a permitted TCP
 * flow arriving from a zone whose screen turns it on:
 *
 *   client SYN      → answered in XDP with a SYN-ACK whose sequence number is
 *                     a SYN cookie (bpf_tcp_raw_gen_syncookie_*) and whose
 *                     window is 0; nothing is stored.
 *   client ACK      → no session: if it returns a valid cookie
 *                     (bpf_tcp_raw_check_syncookie_*), policy admits the flow
 *                     again, the session is created (SESSION_PUNT_SYNPROXY)
 *                     and the ACK itself becomes the SYN to the server, with
 *                     the client's ISN and options.
 *   server SYN-ACK  → both entries get a splice (tcp_splice.bpf.h) that maps
 *                     the server's numbering onto the cookie's, and the
 *                     packet goes to tc_punt_prog with a synproxy_meta, which
 *                     answers the server with the client's ACK and opens the
 *                     client's window (XDP sends only one packet).
 *
 * The client's options survive the cookie only through the TSval of the
 * SYN-ACK (its low bits carry the window scale and SACK-permitted, which the
 * client echoes in its ACK); its MSS class is recovered from the cookie
 * itself. A client without timestamps keeps its MSS class but loses window
 * scaling and SACK. ECN is not negotiated through the proxy.
 */
#ifndef SLUICE_BPF_SYNPROXY_H
#define SLUICE_BPF_SYNPROXY_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "checksum.bpf.h"
#include "conntrack.bpf.h"
#include "fib.bpf.h"
#include "reject.bpf.h"
#include "tcp_splice.bpf.h"
#include "screen.bpf.h"

enum synproxy_stage {
	SYNPROXY_NONE = 0,
	SYNPROXY_ANSWER_SYN = 1,    /* a permitted SYN: answer with a cookie */
	SYNPROXY_CHECK_ACK = 2,     /* an ACK of no session: does it return a cookie? */
	SYNPROXY_ACK_VALID = 3,     /* it did: xdp_policy_prog admits the flow */
	SYNPROXY_SEND_SYN = 4,      /* the session exists: the packet becomes the SYN to the server */
	SYNPROXY_SERVER_SYNACK = 5, /* the server answered: splice, then tc_punt_prog completes */
	SYNPROXY_REFUSE = 6,        /* a returned cookie, but the flow may not open: reset the client */
};

#define SYNPROXY_TTL 64
#define SYNPROXY_DEFAULT_MSS_V4 1460
#define SYNPROXY_DEFAULT_MSS_V6 1440

/* The SYN-ACK and SYN the proxy builds: a TCP header with 20 option bytes
 * (MSS; SACK-permitted or 2 NOPs, timestamps; NOP, window scale), absent
 * options replaced by end-of-list padding. */
struct synproxy_syn {
	struct tcphdr th;
	__u8 opt[20];
};

/* The ACKs tc_punt_prog builds: a TCP header with NOP, NOP, timestamps. */
struct synproxy_ack {
	struct tcphdr th;
	__u8 opt[12];
};

/* Does the zone's SYN proxy answer this permitted SYN? With ABOVE_RATE the
 * SYN is counted, and the proxy stays on for a second after the zone's SYN
 * rate was last above the limit. */
static __always_inline int synproxy_wanted(const struct runtime_config *cfg, const struct packet_ctx *pc, __u64 now)
{
	struct zone_screen *zs = zone_screen_of(cfg, pc->zone_in);
	struct zone_syn_rate *r;
	__u32 key = pc->zone_in % SLUICE_MAX_ZONES;
	__u64 n;

	if (!zs || pc->vlan_id)
		return 0;
	if (zs->syn_proxy == SYN_PROXY_ALWAYS)
		return 1;
	if (zs->syn_proxy != SYN_PROXY_ABOVE_RATE)
		return 0;
	r = bpf_map_lookup_elem(&zone_syn_rates, &key);
	if (!r)
		return 0;
	if (now - r->window_start_ns >= NSEC_PER_SEC) {
		/* Racy between CPUs by design: a second window is an estimate. */
		r->window_start_ns = now;
		r->count = 0;
	}
	n = __sync_fetch_and_add(&r->count, 1) + 1;
	if (n > zs->syn_proxy_rate)
		r->active_until_ns = now + NSEC_PER_SEC;
	return now < r->active_until_ns;
}

/* Is the zone's SYN proxy configured at all (an ACK of no session may carry
 * one of its cookies)? */
static __always_inline int synproxy_configured(const struct runtime_config *cfg, const struct packet_ctx *pc)
{
	struct zone_screen *zs = zone_screen_of(cfg, pc->zone_in);

	return zs && zs->syn_proxy != SYN_PROXY_OFF && !pc->vlan_id;
}

/* An address of either family into a 4-word buffer (IPv4: the first word). */
static __always_inline void copy_addr(__be32 *dst, const __be32 *src, int v4)
{
	if (v4)
		dst[0] = src[0];
	else
		__builtin_memcpy(dst, src, 16);
}

static __always_inline void put_be32(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static __always_inline void synproxy_fill_tcp(struct tcphdr *th, __be16 sport, __be16 dport, __u32 seq, __u32 ack,
					      __u8 flags, __u16 window, __u8 words)
{
	th->source = sport;
	th->dest = dport;
	th->seq = bpf_htonl(seq);
	th->ack_seq = bpf_htonl(ack);
	((__u8 *)th)[12] = words << 4;
	((__u8 *)th)[13] = flags;
	th->window = bpf_htons(window);
	th->check = 0;
	th->urg_ptr = 0;
}

/* The options of a SYN or SYN-ACK the proxy sends. Timestamps carry SACK and
 * window scale with them: without timestamps only the MSS is sent. */
static __always_inline void synproxy_syn_options(__u8 *o, __u16 mss, int ts, int sack, __u32 tsval, __u32 tsecr,
						 int ws, __u8 wscale)
{
	o[0] = TCPOPT_MSS_KIND;
	o[1] = 4;
	o[2] = mss >> 8;
	o[3] = mss & 0xff;
	if (!ts)
		return; /* o[4] = 0: end of list */
	o[4] = sack ? TCPOPT_SACK_PERM_KIND : TCPOPT_NOP_KIND;
	o[5] = sack ? 2 : TCPOPT_NOP_KIND;
	o[6] = TCPOPT_TIMESTAMP_KIND;
	o[7] = TCPOPT_TIMESTAMP_LEN;
	put_be32(o + 8, tsval);
	put_be32(o + 12, tsecr);
	if (!ws)
		return;
	o[16] = TCPOPT_NOP_KIND;
	o[17] = TCPOPT_WSCALE_KIND;
	o[18] = 3;
	o[19] = wscale;
}

static __always_inline void synproxy_ack_options(__u8 *o, int ts, __u32 tsval, __u32 tsecr)
{
	if (!ts)
		return;
	o[0] = TCPOPT_NOP_KIND;
	o[1] = TCPOPT_NOP_KIND;
	o[2] = TCPOPT_TIMESTAMP_KIND;
	o[3] = TCPOPT_TIMESTAMP_LEN;
	put_be32(o + 4, tsval);
	put_be32(o + 8, tsecr);
}

/* An IP header (no options) of the given addresses and L4 length, and the
 * TCP pseudo-header sum that goes with it. */
static __always_inline __u64 synproxy_ip4(struct iphdr *iph, __be32 saddr, __be32 daddr, __u8 ttl, __u16 l4_len)
{
	__builtin_memset(iph, 0, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->tot_len = bpf_htons(sizeof(*iph) + l4_len);
	iph->frag_off = bpf_htons(IP_DF);
	iph->ttl = ttl;
	iph->protocol = IPPROTO_TCP;
	iph->saddr = saddr;
	iph->daddr = daddr;
	iph->check = csum_fold(csum_words(iph, sizeof(*iph)));
	return csum_words(&iph->saddr, 8) + bpf_htons(IPPROTO_TCP) + bpf_htons(l4_len);
}

static __always_inline __u64 synproxy_ip6(struct ipv6hdr *ip6, const __be32 *saddr, const __be32 *daddr, __u8 hops,
					  __u16 l4_len)
{
	__builtin_memset(ip6, 0, sizeof(*ip6));
	ip6->version = 6;
	ip6->payload_len = bpf_htons(l4_len);
	ip6->nexthdr = IPPROTO_TCP;
	ip6->hop_limit = hops;
	__builtin_memcpy(&ip6->saddr, saddr, 16);
	__builtin_memcpy(&ip6->daddr, daddr, 16);
	return csum_words(&ip6->saddr, 32) + bpf_htons(l4_len) + bpf_htons(IPPROTO_TCP);
}

/* Replaces the frame's IP and TCP headers (and any payload) from l3_off on:
 * a fresh IP header of pc's family from saddr to daddr, then syn. */
static __always_inline int synproxy_write_syn(hook_ctx *ctx, const struct packet_ctx *pc, const __be32 *saddr,
					      const __be32 *daddr, __u8 ttl, struct synproxy_syn *syn)
{
	__u32 l3_off = pc->l3_off == sizeof(struct ethhdr) ? sizeof(struct ethhdr) : sizeof(struct l2_header);
	void *data, *data_end;
	__u64 sum;

	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct iphdr *iph;

		if (set_frame_len(ctx, l3_off + sizeof(*iph) + sizeof(*syn)))
			return -1;
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		iph = data + l3_off;
		if ((void *)(iph + 1) + sizeof(*syn) > data_end)
			return -1;
		sum = synproxy_ip4(iph, saddr[0], daddr[0], ttl, sizeof(*syn));
		syn->th.check = csum_fold(sum + csum_words(syn, sizeof(*syn)));
		__builtin_memcpy(iph + 1, syn, sizeof(*syn));
	} else {
		struct ipv6hdr *ip6;

		if (set_frame_len(ctx, l3_off + sizeof(*ip6) + sizeof(*syn)))
			return -1;
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		ip6 = data + l3_off;
		if ((void *)(ip6 + 1) + sizeof(*syn) > data_end)
			return -1;
		sum = synproxy_ip6(ip6, saddr, daddr, ttl, sizeof(*syn));
		syn->th.check = csum_fold(sum + csum_words(syn, sizeof(*syn)));
		__builtin_memcpy(ip6 + 1, syn, sizeof(*syn));
	}
	return 0;
}

/* A cookie for a SYN: generated by the kernel from copies of the SYN's
 * headers (the helpers take fixed-size memory; the stack is simplest). The
 * cookie is the low 32 bits, the MSS class the kernel chose above them. */
static __always_inline __s64 synproxy_gen_cookie(const struct packet_ctx *pc, hook_ctx *ctx, __u8 *tcp,
						 __u32 tcp_len)
{
	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct iphdr iph = {};

		if (hook_load_bytes(ctx, clamp_offset(pc->l3_off), &iph, sizeof(iph)))
			return -1;
		return bpf_tcp_raw_gen_syncookie_ipv4(&iph, (struct tcphdr *)tcp, tcp_len);
	} else {
		struct ipv6hdr ip6 = {};

		if (hook_load_bytes(ctx, clamp_offset(pc->l3_off), &ip6, sizeof(ip6)))
			return -1;
		return bpf_tcp_raw_gen_syncookie_ipv6(&ip6, (struct tcphdr *)tcp, tcp_len);
	}
}

/* The SYN of a permitted flow, answered with a cookie SYN-ACK in place:
 * the caller sends it back with XDP_TX. 0, or -1 to drop the SYN. */
static __always_inline int synproxy_answer_syn(hook_ctx *ctx, struct packet_ctx *pc, const struct zone_screen *zs)
{
	__u8 tcp[60] = {};
	struct tcp_option_pos pos = {};
	struct synproxy_syn syn = {};
	struct l2_header l2 = {};
	__u32 tcp_len, tsval = 0, tsecr = 0, cookie;
	__u16 mss;
	__s64 gen;
	int ts;

	if (hook_load_bytes(ctx, clamp_offset(pc->l4_off), tcp, sizeof(struct tcphdr)))
		return -1;
	tcp_len = (tcp[12] >> 4) * 4;
	/* Bound the register the helper gets (clang would bound a copy). */
	asm volatile("" : "+r"(tcp_len));
	if (tcp_len < sizeof(struct tcphdr) || tcp_len > sizeof(tcp))
		return -1;
	if (hook_load_bytes(ctx, clamp_offset(pc->l4_off), tcp, tcp_len))
		return -1;
	gen = synproxy_gen_cookie(pc, ctx, tcp, tcp_len);
	if (gen < 0)
		return -1;
	cookie = (__u32)gen;

	tcp_find_options(ctx, pc->l4_off, &pos);
	ts = pos.ts && pos.ts <= sizeof(tcp) - 10;
	if (ts) {
		__u32 off = pos.ts & 63;

		if (off > sizeof(tcp) - 10)
			return -1;
		tsecr = ((__u32)tcp[off + 2] << 24) | ((__u32)tcp[off + 3] << 16) | ((__u32)tcp[off + 4] << 8) |
			tcp[off + 5];
		tsval = ((__u32)(bpf_ktime_get_ns() / NSEC_PER_MSEC) & ~SYNPROXY_TS_BITS) |
			(pos.has_wscale ? (pos.wscale > 14 ? 14 : pos.wscale) : SYNPROXY_TS_WSCALE_MASK) |
			(pos.sack_perm ? SYNPROXY_TS_SACK : 0);
	}
	/* What the client may send: the egress path's MTU when known. */
	if (pc->family == SLUICE_FAMILY_IPV4)
		mss = pc->fib_valid && pc->fib.mtu > 576 ? pc->fib.mtu - 40 : SYNPROXY_DEFAULT_MSS_V4;
	else
		mss = pc->fib_valid && pc->fib.mtu > 1280 ? pc->fib.mtu - 60 : SYNPROXY_DEFAULT_MSS_V6;

	if (read_l2_swapped((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			    pc->l3_off == sizeof(struct ethhdr) ? sizeof(struct ethhdr) : sizeof(struct l2_header), &l2))
		return -1;
	/* Window 0: the client sends nothing until the server has answered. */
	synproxy_fill_tcp(&syn.th, dst_port_of(pc), src_port_of(pc), cookie, pc->tcp_seq + 1,
			  TCP_FLAG_SYN | TCP_FLAG_ACK, 0, sizeof(syn) / 4);
	synproxy_syn_options(syn.opt, mss, ts, pos.sack_perm, tsval, tsecr, pos.has_wscale, zs->syn_proxy_wscale);
	if (synproxy_write_syn(ctx, pc, dst_addr_of(pc), src_addr_of(pc), SYNPROXY_TTL, &syn))
		return -1;
	return write_l2((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			pc->l3_off == sizeof(struct ethhdr) ? sizeof(struct ethhdr) : sizeof(struct l2_header), &l2);
}

/* An ACK of no session: 0 and pc->synproxy_state filled when it returns a
 * valid cookie, else -1. */
static __always_inline int synproxy_check_ack(hook_ctx *ctx, struct packet_ctx *pc, const struct zone_screen *zs)
{
	static const __u16 mss_v4[SYNCOOKIE_MSS_CLASSES] = SYNCOOKIE_MSS_V4;
	static const __u16 mss_v6[SYNCOOKIE_MSS_CLASSES] = SYNCOOKIE_MSS_V6;
	struct session_synproxy *sp = &pc->synproxy_state;
	struct {
		struct tcphdr th;
		__u8 opt[4];
	} probe = {};
	struct tcp_option_pos pos = {};
	struct tcphdr th = {};
	struct iphdr iph = {};
	struct ipv6hdr ip6 = {};
	int v4 = pc->family == SLUICE_FAMILY_IPV4;
	__u32 cookie = pc->tcp_ack - 1;
	__u8 tsbuf[8];
	long err;
	int i;

	if (hook_load_bytes(ctx, clamp_offset(pc->l4_off), &th, sizeof(th)))
		return -1;
	if (v4) {
		if (hook_load_bytes(ctx, clamp_offset(pc->l3_off), &iph, sizeof(iph)))
			return -1;
		err = bpf_tcp_raw_check_syncookie_ipv4(&iph, &th);
	} else {
		if (hook_load_bytes(ctx, clamp_offset(pc->l3_off), &ip6, sizeof(ip6)))
			return -1;
		err = bpf_tcp_raw_check_syncookie_ipv6(&ip6, &th);
	}
	if (err)
		return -1;

	__builtin_memset(sp, 0, sizeof(*sp));
	sp->proxy_isn = cookie;
	sp->client_isn = pc->tcp_seq - 1;
	sp->client_window = bpf_ntohs(th.window);
	sp->proxy_wscale = zs->syn_proxy_wscale;
	/* The cookie encodes the client's MSS class: the class whose cookie,
	 * made again for the same SYN, is this one. A cookie from the previous
	 * minute matches none: the smallest class is safe. */
	sp->mss = v4 ? mss_v4[0] : mss_v6[0];
	probe.th.source = th.source;
	probe.th.dest = th.dest;
	probe.th.seq = bpf_htonl(sp->client_isn);
	((__u8 *)&probe.th)[12] = (sizeof(probe) / 4) << 4;
	((__u8 *)&probe.th)[13] = TCP_FLAG_SYN;
	probe.opt[0] = TCPOPT_MSS_KIND;
	probe.opt[1] = 4;
	for (i = SYNCOOKIE_MSS_CLASSES - 1; i >= 0; i--) {
		__u16 mss = v4 ? mss_v4[i] : mss_v6[i];
		__s64 gen;

		probe.opt[2] = mss >> 8;
		probe.opt[3] = mss & 0xff;
		gen = v4 ? bpf_tcp_raw_gen_syncookie_ipv4(&iph, &probe.th, sizeof(probe))
			 : bpf_tcp_raw_gen_syncookie_ipv6(&ip6, &probe.th, sizeof(probe));
		if (gen >= 0 && (__u32)gen == cookie) {
			sp->mss = mss;
			break;
		}
	}

	/* Timestamps: the ACK's TSecr is the proxy's TSval, with the client's
	 * window scale and SACK-permitted in its low bits. */
	tcp_find_options(ctx, pc->l4_off, &pos);
	if (pos.ts && !hook_load_bytes(ctx, clamp_offset(pc->l4_off) + (pos.ts & 63) + 2, tsbuf, 8)) {
		__u32 tsecr = ((__u32)tsbuf[4] << 24) | ((__u32)tsbuf[5] << 16) | ((__u32)tsbuf[6] << 8) | tsbuf[7];

		sp->flags |= SYNPROXY_F_TIMESTAMPS;
		sp->client_tsval = ((__u32)tsbuf[0] << 24) | ((__u32)tsbuf[1] << 16) | ((__u32)tsbuf[2] << 8) | tsbuf[3];
		sp->proxy_tsval = tsecr;
		if ((tsecr & SYNPROXY_TS_WSCALE_MASK) != SYNPROXY_TS_WSCALE_MASK) {
			sp->flags |= SYNPROXY_F_WSCALE;
			sp->client_wscale = tsecr & SYNPROXY_TS_WSCALE_MASK;
		}
		if (tsecr & SYNPROXY_TS_SACK)
			sp->flags |= SYNPROXY_F_SACK;
	}
	return 0;
}

/* The client's packet (its ACK, or a later one while the server has not
 * answered) becomes the SYN to the server: the client's ISN, MSS, window
 * scale, SACK-permitted and TSval; no payload. Updates pc to the new
 * packet. 0 or -1. */
static __always_inline int synproxy_send_syn(hook_ctx *ctx, struct packet_ctx *pc)
{
	const struct session_synproxy *sp = &pc->synproxy_state;
	struct synproxy_syn syn = {};
	int ts = sp->flags & SYNPROXY_F_TIMESTAMPS;
	int ws = ts && (sp->flags & SYNPROXY_F_WSCALE);
	__u32 window = sp->client_window;
	__u32 ip_len = pc->family == SLUICE_FAMILY_IPV4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	__be32 saddr[4], daddr[4];

	/* A SYN's window is never scaled. */
	if (ws) {
		window <<= (sp->client_wscale & 15);
		if (window > 0xffff)
			window = 0xffff;
	}
	synproxy_fill_tcp(&syn.th, src_port_of(pc), dst_port_of(pc), sp->client_isn, 0, TCP_FLAG_SYN, (__u16)window,
			  sizeof(syn) / 4);
	synproxy_syn_options(syn.opt, sp->mss, ts, ts && (sp->flags & SYNPROXY_F_SACK), sp->client_tsval, 0, ws,
			     sp->client_wscale);
	copy_addr(saddr, src_addr_of(pc), pc->family == SLUICE_FAMILY_IPV4);
	copy_addr(daddr, dst_addr_of(pc), pc->family == SLUICE_FAMILY_IPV4);
	if (synproxy_write_syn(ctx, pc, saddr, daddr, pc->ttl, &syn))
		return -1;
	pc->l4_off = pc->l3_off + ip_len;
	pc->l3_len = ip_len + sizeof(syn);
	pc->l4_payload_len = 0;
	pc->tcp_flags = TCP_FLAG_SYN;
	pc->tcp_seq = sp->client_isn;
	pc->tcp_ack = 0;
	return 0;
}

/* The server's SYN-ACK for a proxied session: both entries get their
 * splice, the flow is established, and the packet goes to tc_punt_prog with
 * what it needs to answer both ends (the caller passes it on with
 * HOOK_PASS_HANDOFF). Returns 0, or -1 to drop (counted by the caller): not
 * the hook's verdict, as TC's hand-off verdict, TC_ACT_UNSPEC, is -1 too. */
static __always_inline int synproxy_server_synack(hook_ctx *ctx, struct packet_ctx *pc)
{
	struct session_synproxy sp = pc->synproxy_state;
	struct tcp_option_pos pos = {};
	struct session_splice to_server = {}, to_client = {};
	struct session_value *s, *peer;
	struct synproxy_meta *meta;
	union session_key other;
	struct tcphdr th = {};
	__u32 server_isn = pc->tcp_seq, server_tsval = 0;
	__u8 server_ws = 0, has_server_ws = 0;
	__u32 window;
	__u8 tsbuf[4];

	if (hook_load_bytes(ctx, clamp_offset(pc->l4_off), &th, sizeof(th)))
		return -1;
	tcp_find_options(ctx, pc->l4_off, &pos);
	if (pos.has_wscale) {
		has_server_ws = 1;
		server_ws = pos.wscale > 14 ? 14 : pos.wscale;
	}
	if (pos.ts && !hook_load_bytes(ctx, clamp_offset(pc->l4_off) + (pos.ts & 63) + 2, tsbuf, 4))
		server_tsval = ((__u32)tsbuf[0] << 24) | ((__u32)tsbuf[1] << 16) | ((__u32)tsbuf[2] << 8) | tsbuf[3];

	/* Sequence space: the client knows the cookie as the server's ISN. */
	to_client.seq_delta = sp.proxy_isn - server_isn;
	to_server.ack_delta = server_isn - sp.proxy_isn;
	if (sp.flags & SYNPROXY_F_TIMESTAMPS) {
		to_client.tsval_delta = sp.proxy_tsval - server_tsval;
		to_server.tsecr_delta = server_tsval - sp.proxy_tsval;
	}
	/* Windows: the client scales by what the proxy offered it, the server
	 * by what it offered itself (RFC 7323: none unless both sides did). */
	window = bpf_ntohs(th.window);
	if (sp.flags & SYNPROXY_F_WSCALE) {
		if (has_server_ws) {
			to_client.window_shift = (__s8)server_ws - (__s8)sp.proxy_wscale;
		} else {
			to_client.window_shift = -(__s8)sp.proxy_wscale;
			to_server.window_shift = (__s8)sp.client_wscale;
		}
		window >>= (sp.proxy_wscale & 15);
	}

	s = session_lookup(pc->family, &pc->key);
	if (!s)
		return -1;
	peer_key(pc, s, &other);
	peer = session_lookup(pc->family, &other);
	if (!peer)
		return -1;
	s->splice = to_client;
	s->punt_flags = (s->punt_flags & ~SESSION_PUNT_SYNPROXY) | SESSION_PUNT_SPLICED;
	peer->splice = to_server;
	peer->punt_flags = (peer->punt_flags & ~SESSION_PUNT_SYNPROXY) | SESSION_PUNT_SPLICED;
	tcp_set_state(pc, s, TCP_SESSION_ESTABLISHED, SESSION_F_SEEN_REPLY);

	meta = hook_handoff(ctx, sizeof(*meta));
	if (!meta)
		return -1;
	meta->magic = SYNPROXY_META_MAGIC;
	meta->flags = sp.flags;
	meta->pad = 0;
	meta->client_isn = sp.client_isn;
	meta->proxy_isn = sp.proxy_isn;
	meta->client_tsval = sp.client_tsval;
	meta->proxy_tsval = sp.proxy_tsval;
	meta->server_tsval = server_tsval;
	meta->client_window = sp.client_window;
	meta->window_to_client = window > 0xffff ? 0xffff : (__u16)window;
	return 0;
}

/* ---- TC ingress: the two packets that end a proxied handshake ---- */

/* Writes Ethernet (MACs), a fresh IP header and ack into the skb, which is
 * cut to fit them. The family is the skb's own. 0 or -1. */
static __always_inline int synproxy_write_ack_skb(struct __sk_buff *skb, __u8 family, const __u8 *dmac, const __u8 *smac,
						  const __be32 *saddr, const __be32 *daddr, struct synproxy_ack *ack)
{
	__u32 l3 = sizeof(struct ethhdr);
	__u8 macs[12];
	__u64 sum;

	__builtin_memcpy(macs, dmac, 6);
	__builtin_memcpy(macs + 6, smac, 6);
	if (family == SLUICE_FAMILY_IPV4) {
		struct iphdr iph;

		sum = synproxy_ip4(&iph, saddr[0], daddr[0], SYNPROXY_TTL, sizeof(*ack));
		ack->th.check = csum_fold(sum + csum_words(ack, sizeof(*ack)));
		if (bpf_skb_change_tail(skb, l3 + sizeof(iph) + sizeof(*ack), 0) ||
		    bpf_skb_store_bytes(skb, 0, macs, 12, 0) || bpf_skb_store_bytes(skb, l3, &iph, sizeof(iph), 0) ||
		    bpf_skb_store_bytes(skb, l3 + sizeof(iph), ack, sizeof(*ack), 0))
			return -1;
	} else {
		struct ipv6hdr ip6;

		sum = synproxy_ip6(&ip6, saddr, daddr, SYNPROXY_TTL, sizeof(*ack));
		ack->th.check = csum_fold(sum + csum_words(ack, sizeof(*ack)));
		if (bpf_skb_change_tail(skb, l3 + sizeof(ip6) + sizeof(*ack), 0) ||
		    bpf_skb_store_bytes(skb, 0, macs, 12, 0) || bpf_skb_store_bytes(skb, l3, &ip6, sizeof(ip6), 0) ||
		    bpf_skb_store_bytes(skb, l3 + sizeof(ip6), ack, sizeof(*ack), 0))
			return -1;
	}
	return 0;
}

/* The server's SYN-ACK of a proxied handshake (xdp_synproxy_prog spliced the
 * session): a copy becomes the client's ACK to the server, sent back out of
 * this interface; the packet itself becomes the window update that lets the
 * client send, redirected towards the client. */
static __always_inline int tc_synproxy_complete(struct __sk_buff *skb, struct packet_ctx *pc,
						const struct synproxy_meta *mp)
{
	struct synproxy_meta m;
	struct bpf_fib_lookup fib = {};
	struct synproxy_ack ack = {};
	struct ethhdr eth;
	struct session_value *s;
	__be32 client[4] = {}, server[4] = {};
	__be16 client_port, server_port;
	int ts, v4;

	m = *mp;
	ts = m.flags & SYNPROXY_F_TIMESTAMPS;
	if (bpf_skb_pull_data(skb, skb->len < HANDOFF_HEADER_PULL ? skb->len : HANDOFF_HEADER_PULL))
		return TC_ACT_SHOT;
	if (parse_frame(pc, (void *)(long)skb->data, (void *)(long)skb->data_end, skb->len) != PARSE_OK ||
	    pc->protocol != IPPROTO_TCP || pc->l3_off != sizeof(struct ethhdr))
		return TC_ACT_SHOT;
	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)))
		return TC_ACT_SHOT;
	v4 = pc->family == SLUICE_FAMILY_IPV4;

	/* 1. The client's ACK, to the server: the SYN-ACK's tuple reversed. */
	synproxy_fill_tcp(&ack.th, dst_port_of(pc), src_port_of(pc), m.client_isn + 1, pc->tcp_seq + 1, TCP_FLAG_ACK,
			  m.client_window, sizeof(ack) / 4);
	synproxy_ack_options(ack.opt, ts, m.client_tsval, m.server_tsval);
	if (synproxy_write_ack_skb(skb, pc->family, eth.h_source, eth.h_dest, dst_addr_of(pc), src_addr_of(pc), &ack))
		return TC_ACT_SHOT;
	if (bpf_clone_redirect(skb, skb->ifindex, 0))
		return TC_ACT_SHOT;

	/* 2. The window update, to the client, in the tuple it knows: the
	 * reply direction's translation when the flow has one. */
	copy_addr(server, src_addr_of(pc), v4);
	copy_addr(client, dst_addr_of(pc), v4);
	server_port = src_port_of(pc);
	client_port = dst_port_of(pc);
	s = session_lookup(pc->family, &pc->key);
	if (s && (s->nat.flags & SESSION_NAT_ANY)) {
		copy_addr(server, s->nat.new_src_addr, v4);
		copy_addr(client, s->nat.new_dst_addr, v4);
		server_port = s->nat.new_src_port;
		client_port = s->nat.new_dst_port;
	}
	fib.ifindex = skb->ifindex;
	fib.l4_protocol = IPPROTO_TCP;
	fib.sport = server_port;
	fib.dport = client_port;
	if (v4) {
		fib.family = AF_INET;
		fib.tot_len = sizeof(struct iphdr) + sizeof(ack);
		fib.ipv4_src = server[0];
		fib.ipv4_dst = client[0];
	} else {
		fib.family = AF_INET6;
		fib.tot_len = sizeof(struct ipv6hdr) + sizeof(ack);
		__builtin_memcpy(fib.ipv6_src, server, 16);
		__builtin_memcpy(fib.ipv6_dst, client, 16);
	}
	if (bpf_fib_lookup(skb, &fib, sizeof(fib), 0) != BPF_FIB_LKUP_RET_SUCCESS)
		return TC_ACT_SHOT; /* the client's next window probe still gets through */
	__builtin_memset(&ack, 0, sizeof(ack));
	synproxy_fill_tcp(&ack.th, server_port, client_port, m.proxy_isn + 1, m.client_isn + 1, TCP_FLAG_ACK,
			  m.window_to_client, sizeof(ack) / 4);
	synproxy_ack_options(ack.opt, ts, m.proxy_tsval, m.client_tsval);
	if (synproxy_write_ack_skb(skb, pc->family, fib.dmac, fib.smac, server, client, &ack))
		return TC_ACT_SHOT;
	count(STAT_SYNPROXY_ESTABLISHED);
	if (s) {
		struct runtime_config *cfg = runtime_config();
		struct screen_counter *sc = cfg ? screen_counter_of(cfg, s->zone_out) : 0; /* the client's zone */

		if (sc)
			sc->syn_proxy_established += 1;
	}
	return bpf_redirect(fib.ifindex, 0);
}

#endif
