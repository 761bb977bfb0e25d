/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The hook the pipeline runs on. The pipeline (parse → zone → policy → NAT →
 * forward, with host-inbound, the SYN proxy, the splice and the punt) is one
 * body of code; this header is everything in it that differs between XDP and
 * TC ingress: the context type, the verdicts, the section and program names,
 * and the handful of helpers that exist under another name (or not at all) on
 * the other hook.
 *
 * sluice_bpf.bpf.c builds the pipeline for XDP; sluice_tc.bpf.c builds it
 * with SLUICE_HOOK_TC for TC ingress, the `tc` mode, for devices where XDP
 * would run generic: there a GRO aggregate is classified and redirected
 * whole, keeping GSO, where generic XDP must linearize it first and cannot
 * redirect it at all.
 */
#ifndef SLUICE_BPF_HOOK_H
#define SLUICE_BPF_HOOK_H

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "maps.bpf.h"
#include "parse.bpf.h"

/* The marks of packets the TC pipeline sent out (hook_tx, hook_redirect). */
#include "tc_marks.h"

/* Header bytes tc_punt_prog makes linear before it parses a handed-off
 * packet (its payload may stay in fragments). */
#define HANDOFF_HEADER_PULL 256

/* The hand-off record's place when it cannot travel with the packet: this
 * CPU's tc_handoff slot, tagged with the packet's ingress ifindex and frame
 * length, read and cleared by tc_punt_prog (sluice_bpf.bpf.c handoff_take).
 * Sound only where tc_punt_prog runs for the same packet before this CPU
 * runs the pipeline on another: the TC pipeline (the next filter on the
 * hook) and generic XDP (TC ingress follows it in __netif_receive_skb_core);
 * native XDP runs a whole batch of frames first, so it keeps the metadata
 * area (hook_handoff below). NULL when the record does not fit. */
static __always_inline void *handoff_slot(__u32 ifindex, __u32 frame_len, __u32 size)
{
	__u32 slot = 0;
	struct tc_handoff *h = bpf_map_lookup_elem(&tc_handoff, &slot);

	if (!h || size > sizeof(h->bytes))
		return 0;
	h->ifindex = ifindex;
	h->len = frame_len;
	return h->bytes;
}

#ifdef SLUICE_HOOK_TC

typedef struct __sk_buff hook_ctx;
#define HOOK_SEC SEC("tc")
#define HOOK_PROG(stage) tc_##stage##_prog
#define HOOK_PASS TC_ACT_OK
#define HOOK_DROP TC_ACT_SHOT
#define HOOK_ABORTED TC_ACT_SHOT
/* A pass with a hand-off for tc_punt_prog: continue to the next filter on
 * the hook (tc_punt_prog, attached behind the pipeline) instead of ending
 * classification. */
#define HOOK_PASS_HANDOFF TC_ACT_UNSPEC

/* Headers the parser may read, made linear (and writable) first: a GRO
 * aggregate's payload stays in its fragments, untouched. */
#define HOOK_TC_HEADER_PULL 256

/* Parses the frame into pc (parse_frame's codes). The 802.1Q tag of a
 * tagged frame is not in it on TC: the kernel moved it to the skb. */
static __always_inline int hook_parse(hook_ctx *ctx, struct packet_ctx *pc)
{
	__u32 len = ctx->len;
	int rc;

	if (bpf_skb_pull_data(ctx, len < HOOK_TC_HEADER_PULL ? len : HOOK_TC_HEADER_PULL))
		return STAT_DROP_INTERNAL;
	rc = parse_frame(pc, (void *)(long)ctx->data, (void *)(long)ctx->data_end, len);
	if (ctx->vlan_present) {
		/* A tag in the skb and another in the frame: two deep. */
		if (pc->l3_off != sizeof(struct ethhdr))
			return STAT_DROP_VLAN_TOO_DEEP;
		pc->vlan_id = ctx->vlan_tci & 0x0fff;
	}
	return rc;
}

/* The IP length of the packets this one leaves as: a GSO packet (a GRO
 * aggregate) is cut into segments of gso_size payload bytes on transmit,
 * so its MTU is a segment's, not the aggregate's. */
static __always_inline __u32 hook_l3_wire_len(hook_ctx *ctx, const struct packet_ctx *pc)
{
	if (ctx->gso_segs > 1 && ctx->gso_size)
		return (__u32)(pc->l3_len - pc->l4_payload_len) + ctx->gso_size;
	return pc->l3_len;
}

/* Removes the tag the kernel took off a tagged frame (skb->vlan_tci), so
 * the packet does not leave tagged. */
static __always_inline long hook_untag(hook_ctx *ctx)
{
	return ctx->vlan_present ? bpf_skb_vlan_pop(ctx) : 0;
}

/* Removes an 802.1Q tag that is still in the frame (pc->l3_off says so).
 * The kernel moves a received frame's tag into the skb before TC ingress,
 * so only a frame BPF_PROG_TEST_RUN builds (the fixture tables) has one
 * here; with no tag in the skb, bpf_skb_vlan_pop takes the frame's. */
static __always_inline long hook_pop_frame_tag(hook_ctx *ctx)
{
	return ctx->vlan_present ? -1 : bpf_skb_vlan_pop(ctx);
}

/* The whole frame's length; data_end only bounds the linear part. */
static __always_inline __u32 hook_frame_len(hook_ctx *ctx)
{
	return ctx->len;
}

static __always_inline long hook_load_bytes(hook_ctx *ctx, __u32 off, void *to, __u32 len)
{
	return bpf_skb_load_bytes(ctx, off, to, len);
}

/* Grows (delta < 0) the frame at its front. Shrinking from the front is
 * not needed on TC: a VLAN tag there is not in the frame (hook_vlan_pop). */
static __always_inline long hook_adjust_head(hook_ctx *ctx, int delta)
{
	if (delta > 0)
		return -1;
	return bpf_skb_change_head(ctx, (__u32)-delta, 0);
}

static __always_inline long hook_set_frame_len(hook_ctx *ctx, __u32 new_len)
{
	return bpf_skb_change_tail(ctx, new_len, 0);
}

/* Sends the frame back out of the interface it came in on. */
static __always_inline int hook_tx(hook_ctx *ctx)
{
	ctx->mark = SLUICE_TC_TX_MARK;
	return bpf_redirect(ctx->ifindex, 0);
}

/* Out of `ifindex` (a port in tx_ports: the caller checked). A veth whose
 * peer is in another namespace (SESSION_FIB_PEER) gets the packet in its
 * peer's receive path at once, as its transmit would after a trip through
 * the backlog: no egress hook on the way, so no mark. */
static __always_inline int hook_redirect(hook_ctx *ctx, __u32 ifindex, __u16 fib_flags)
{
	if (fib_flags & SESSION_FIB_PEER)
		return bpf_redirect_peer(ifindex, 0);
	ctx->mark = SLUICE_TC_REDIRECT_MARK;
	return bpf_redirect(ifindex, 0);
}

/* Room for the record tc_punt_prog reads (punt_meta, synproxy_meta) of a
 * packet passed with HOOK_PASS_HANDOFF, or NULL. TC has no metadata area in
 * front of the frame; the record waits in this CPU's tc_handoff slot, which
 * tc_punt_prog, the next filter on the same hook, reads and clears. */
static __always_inline void *hook_handoff(hook_ctx *ctx, __u32 size)
{
	return handoff_slot(ctx->ifindex, ctx->len, size);
}

#else /* XDP */

typedef struct xdp_md hook_ctx;
#define HOOK_SEC SEC("xdp")
#define HOOK_PROG(stage) xdp_##stage##_prog
#define HOOK_PASS XDP_PASS
#define HOOK_DROP XDP_DROP
#define HOOK_ABORTED XDP_ABORTED
#define HOOK_PASS_HANDOFF XDP_PASS

static __always_inline int hook_parse(hook_ctx *ctx, struct packet_ctx *pc)
{
	return parse_packet(pc, (void *)(long)ctx->data, (void *)(long)ctx->data_end);
}

static __always_inline __u32 hook_l3_wire_len(hook_ctx *ctx, const struct packet_ctx *pc)
{
	return pc->l3_len;
}

/* An XDP frame keeps its tag in the frame (hook_pop_frame_tag). */
static __always_inline long hook_untag(hook_ctx *ctx)
{
	return 0;
}

static __always_inline __u32 hook_frame_len(hook_ctx *ctx)
{
	/* Via the helper: clang folds data_end - data into 32-bit pointer
	 * arithmetic the verifier rejects. */
	return (__u32)bpf_xdp_get_buff_len(ctx);
}

static __always_inline long hook_load_bytes(hook_ctx *ctx, __u32 off, void *to, __u32 len)
{
	return bpf_xdp_load_bytes(ctx, off, to, len);
}

static __always_inline long hook_adjust_head(hook_ctx *ctx, int delta)
{
	return bpf_xdp_adjust_head(ctx, delta);
}

/* Removes the 802.1Q tag in front of L3: the MACs move 4 bytes on, the
 * frame starts there. */
static __always_inline long hook_pop_frame_tag(hook_ctx *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct vlan_tag *tag = (void *)(eth + 1);
	__u8 macs[12];

	if ((void *)(tag + 1) > data_end)
		return -1;
	__builtin_memcpy(macs, eth, 12);
	eth = (void *)eth + sizeof(*tag);
	__builtin_memcpy(eth, macs, 12);
	eth->h_proto = tag->proto;
	return hook_adjust_head(ctx, (int)sizeof(*tag));
}

static __always_inline long hook_set_frame_len(hook_ctx *ctx, __u32 new_len)
{
	return bpf_xdp_adjust_tail(ctx, (int)new_len - (int)hook_frame_len(ctx));
}

static __always_inline int hook_tx(hook_ctx *ctx)
{
	return XDP_TX;
}

static __always_inline int hook_redirect(hook_ctx *ctx, __u32 ifindex, __u16 fib_flags)
{
	return bpf_redirect_map(&tx_ports, ifindex, 0);
}

/* Set by the loader before load (a .rodata knob the verifier reads as a
 * constant): whether this kernel lets XDP programs call bpf_xdp_adjust_meta.
 * Some kernels refuse the helper, and a program that calls it does not load
 * at all there; with the knob at 0 the call is dead code the verifier never
 * visits, and the hand-off takes this CPU's slot (handoff_slot), which the
 * loader then allows for generic XDP only (native XDP runs frames in batches). */
const volatile __u8 xdp_handoff_in_meta = 1;

/* Room for the record tc_punt_prog reads, in the metadata area in front of
 * the frame (generic XDP keeps it on the skb), or NULL. */
static __always_inline void *hook_handoff(hook_ctx *ctx, __u32 size)
{
	void *meta;

	if (!xdp_handoff_in_meta)
		return handoff_slot(ctx->ingress_ifindex, hook_frame_len(ctx), size);
	if (bpf_xdp_adjust_meta(ctx, -(int)size))
		return 0;
	meta = (void *)(long)ctx->data_meta;
	if (meta + size > (void *)(long)ctx->data)
		return 0;
	return meta;
}

#endif

#endif
