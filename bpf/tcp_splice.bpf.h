/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * TCP connections the inspection stage handed back to the fast path
 * (inspect-bytes, maps/session.h session_splice). The stage had terminated
 * the connection in two sockets, so client and server each agreed their
 * sequence numbers, timestamps and window scale with one of them; from the
 * hand-off on, XDP rewrites every segment so that each end keeps seeing the
 * numbering it agreed on: sequence and acknowledgment numbers, SACK blocks,
 * the timestamp option and the window field. Checksums are updated
 * incrementally (a CHECKSUM_PARTIAL field covers none of these fields and is
 * left alone, see nat_rewrite.bpf.h).
 */
#ifndef SLUICE_BPF_TCP_SPLICE_H
#define SLUICE_BPF_TCP_SPLICE_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "checksum.bpf.h"
#include "nat_rewrite.bpf.h"
#include "hook.bpf.h"

#define TCPOPT_EOL_KIND 0
#define TCPOPT_NOP_KIND 1
#define TCPOPT_MSS_KIND 2
#define TCPOPT_WSCALE_KIND 3
#define TCPOPT_SACK_PERM_KIND 4
#define TCPOPT_SACK_KIND 5
#define TCPOPT_TIMESTAMP_KIND 8
#define TCPOPT_TIMESTAMP_LEN 10
#define TCP_MAX_OPTION_BYTES 40

/* Where the options that carry sequence-space or clock values sit, as byte
 * offsets from the TCP header (0: absent). */
struct tcp_option_pos {
	__u32 ts;          /* the timestamp option (kind 8, length 10) */
	__u32 sack;        /* the SACK option */
	__u32 sack_blocks; /* its blocks, 1..4 */
	/* Options of a SYN (the SYN proxy): present when has_* is set. */
	__u16 mss;
	__u8 wscale;
	__u8 has_mss;
	__u8 has_wscale;
	__u8 sack_perm;
	__u8 pad[2];
};

/* The option walk's state: the options copied to the stack, so that the
 * loop body (a bpf_loop callback, verified once whatever the loop does)
 * reads no packet memory. */
struct tcp_option_walk {
	__u8 buf[64];
	__u32 off;   /* next option, from the first option byte */
	__u32 len;   /* option bytes */
	struct tcp_option_pos pos;
};

static long tcp_option_step(__u32 index, void *ctx)
{
	struct tcp_option_walk *w = ctx;
	__u32 off = w->off;
	__u8 kind, len;

	if (off >= w->len || off >= TCP_MAX_OPTION_BYTES)
		return 1;
	kind = w->buf[off & 63];
	if (kind == TCPOPT_EOL_KIND)
		return 1;
	if (kind == TCPOPT_NOP_KIND) {
		w->off = off + 1;
		return 0;
	}
	if (off + 2 > w->len)
		return 1;
	len = w->buf[(off + 1) & 63];
	if (len < 2 || off + len > w->len)
		return 1;
	if (kind == TCPOPT_TIMESTAMP_KIND && len == TCPOPT_TIMESTAMP_LEN) {
		w->pos.ts = sizeof(struct tcphdr) + off;
	} else if (kind == TCPOPT_SACK_KIND && len >= 10 && len <= 34 && (len - 2) % 8 == 0) {
		w->pos.sack = sizeof(struct tcphdr) + off;
		w->pos.sack_blocks = (len - 2) / 8;
	} else if (kind == TCPOPT_MSS_KIND && len == 4) {
		w->pos.mss = ((__u16)w->buf[(off + 2) & 63] << 8) | w->buf[(off + 3) & 63];
		w->pos.has_mss = 1;
	} else if (kind == TCPOPT_WSCALE_KIND && len == 3) {
		w->pos.wscale = w->buf[(off + 2) & 63];
		w->pos.has_wscale = 1;
	} else if (kind == TCPOPT_SACK_PERM_KIND && len == 2) {
		w->pos.sack_perm = 1;
	}
	w->off = off + len;
	return 0;
}

/* Finds the options of the TCP header at l4_off (0 in pos: absent).
 * Malformed options end the walk; what was found before stays valid. */
static __always_inline void tcp_find_options(hook_ctx *ctx, __u32 l4_off, struct tcp_option_pos *pos)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *tcp = data + clamp_offset(l4_off);
	struct tcp_option_walk w = {};
	__u32 len;

	__builtin_memset(pos, 0, sizeof(*pos));
	if ((void *)(tcp + sizeof(struct tcphdr)) > data_end)
		return;
	len = (tcp[12] >> 4) * 4;
	if (len <= sizeof(struct tcphdr))
		return;
	len -= sizeof(struct tcphdr);
	if (len > TCP_MAX_OPTION_BYTES)
		return;
	if (hook_load_bytes(ctx, clamp_offset(l4_off) + sizeof(struct tcphdr), w.buf, len))
		return;
	w.len = len;
	bpf_loop(TCP_MAX_OPTION_BYTES, tcp_option_step, &w, 0);
	*pos = w.pos;
}

/* The 32-bit field at byte offset off of the TCP header: reads it, stores
 * value + delta, and returns the checksum change. A field at an odd offset
 * straddles the checksum's 16-bit words: its contribution is byte-swapped. */
static __always_inline __u64 tcp_field_add(__u8 *tcp, void *data_end, __u32 off, __u32 delta)
{
	__u8 *p = tcp + (off & 63);
	__be32 old, new;
	__u64 d;
	__u16 f;

	if ((void *)(p + 4) > data_end)
		return 0;
	__builtin_memcpy(&old, p, 4);
	new = bpf_htonl(bpf_ntohl(old) + delta);
	__builtin_memcpy(p, &new, 4);
	d = csum_delta32(&old, &new, 1);
	if (!(off & 1))
		return d;
	f = csum_fold_raw(d);
	return (__u16)((f >> 8) | (f << 8));
}

/* The sender's newest TSval while the session is punted (host order), for
 * the stage's hand-off. */
static __always_inline void tcp_note_tsval(hook_ctx *ctx, const struct packet_ctx *pc, struct session_value *s)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *tcp = data + clamp_offset(pc->l4_off);
	struct tcp_option_pos pos = {};
	__u8 *p;
	__be32 tsval;

	tcp_find_options(ctx, pc->l4_off, &pos);
	data = (void *)(long)ctx->data; /* helper calls invalidate packet pointers */
	data_end = (void *)(long)ctx->data_end;
	tcp = data + clamp_offset(pc->l4_off);
	if (!pos.ts)
		return;
	p = tcp + ((pos.ts + 2) & 63);
	if ((void *)(p + 4) > data_end)
		return;
	__builtin_memcpy(&tsval, p, 4);
	s->splice.last_tsval = bpf_ntohl(tsval);
}

/* The window field of a segment whose sender and receiver agreed different
 * scales with the stage's two sockets: the same byte count in the
 * receiver's scale, saturating at the field's maximum. */
static __always_inline __u16 tcp_scale_window(__u16 window, __s8 shift)
{
	__u32 w = window;

	if (shift > 0) {
		w <<= (shift & 15);
		if (w > 0xffff)
			w = 0xffff;
	} else if (shift < 0) {
		w >>= ((-shift) & 15);
	}
	return (__u16)w;
}

/* Rewrites a segment of a spliced session. 0, or -1 when the header is not
 * all there (the caller drops it). */
static __always_inline int tcp_splice_rewrite(hook_ctx *ctx, struct packet_ctx *pc, const struct session_splice *sp)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *tcp = data + clamp_offset(pc->l4_off);
	struct tcphdr *th = (void *)tcp;
	struct tcp_option_pos pos = {};
	__u64 delta = 0, pseudo_old;
	__u16 window;
	__u32 i;

	if ((void *)(th + 1) > data_end)
		return -1;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct iphdr *iph = data + clamp_offset(pc->l3_off);

		if ((void *)(iph + 1) > data_end)
			return -1;
		pseudo_old = pseudo_sum(pc, (__u64)iph->saddr + iph->daddr);
	} else {
		struct ipv6hdr *ip6 = data + clamp_offset(pc->l3_off);
		__be32 *a;

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		a = (__be32 *)&ip6->saddr;
		pseudo_old = pseudo_sum(pc, (__u64)a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]);
	}
	/* Tells a partial checksum apart before any field changes. */
	{
		__u16 check = th->check;
		int partial = pc->frag == FRAG_NONE && check == csum_fold_raw(pseudo_old);

		delta += tcp_field_add(tcp, data_end, 4, sp->seq_delta);
		if (th->ack)
			delta += tcp_field_add(tcp, data_end, 8, sp->ack_delta);
		window = tcp_scale_window(bpf_ntohs(th->window), sp->window_shift);
		delta += csum_delta16(th->window, bpf_htons(window));
		th->window = bpf_htons(window);

		tcp_find_options(ctx, pc->l4_off, &pos);
		/* The helper calls invalidated the packet pointers. */
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		tcp = data + clamp_offset(pc->l4_off);
		th = (void *)tcp;
		if ((void *)(th + 1) > data_end)
			return -1;
		if (pos.ts) {
			delta += tcp_field_add(tcp, data_end, pos.ts + 2, sp->tsval_delta);
			delta += tcp_field_add(tcp, data_end, pos.ts + 6, sp->tsecr_delta);
		}
		for (i = 0; i < 4; i++) {
			if (i >= pos.sack_blocks)
				break;
			delta += tcp_field_add(tcp, data_end, pos.sack + 2 + i * 8, sp->ack_delta);
			delta += tcp_field_add(tcp, data_end, pos.sack + 6 + i * 8, sp->ack_delta);
		}
		if ((void *)(th + 1) > data_end)
			return -1;
		if (!partial)
			th->check = csum_apply(th->check, delta);
	}
	return 0;
}

#endif
