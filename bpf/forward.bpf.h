/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Leaving through XDP: MAC rewrite, TTL decrement, VLAN pop, devmap redirect. */
#ifndef SLUICE_BPF_FORWARD_H
#define SLUICE_BPF_FORWARD_H

#include "checksum.bpf.h"
#include "conntrack.bpf.h"
#include "fib.bpf.h"
#include "hook.bpf.h"

/* Pass reasons for fib_resolve codes that leave the packet to the kernel. */
static __always_inline int fib_pass_reason(int rc)
{
	switch (rc) {
	case BPF_FIB_LKUP_RET_NOT_FWDED:
	case BPF_FIB_LKUP_RET_FWD_DISABLED:
		return STAT_PASS_LOCAL;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return STAT_PASS_NO_NEIGH;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return STAT_PASS_OVER_MTU;
	default:
		return STAT_PASS_NO_ROUTE;
	}
}

/* Removes the 802.1Q tag in front of L3 (the egress interface is untagged). */
static __always_inline int vlan_pop(hook_ctx *ctx, struct packet_ctx *pc)
{
	if (hook_pop_frame_tag(ctx))
		return -1;
	pc->l3_off -= sizeof(struct vlan_tag);
	return 0;
}

/* Makes pc->fib valid (the session's cache was stale or empty), refreshing
 * the session's cache. Returns the BPF_FIB_LKUP_RET_* code. */
static __always_inline int fib_ensure(hook_ctx *ctx, struct packet_ctx *pc, const struct runtime_config *cfg)
{
	int rc;

	if (pc->fib_valid)
		return BPF_FIB_LKUP_RET_SUCCESS;
	rc = fib_resolve(ctx, pc, ctx->ingress_ifindex, hook_l3_wire_len(ctx, pc));
	if (rc == BPF_FIB_LKUP_RET_SUCCESS && pc->fib_stale_session) {
		struct session_value *s = session_lookup(pc->family, &pc->key);

		if (s) {
			s->fib = pc->fib;
			s->fib.generation = cfg->fib_generation;
		}
	}
	return rc;
}

/* Why a packet with a valid FIB result must still go to the kernel, or 0. */
static __always_inline int forward_pass_reason(hook_ctx *ctx, const struct packet_ctx *pc)
{
	if (pc->ttl <= 1)
		return STAT_PASS_TTL;
	if (!(pc->fib.flags & SESSION_FIB_XMIT))
		return STAT_PASS_NO_XMIT;
	/* In generic mode GSO/GRO aggregates arrive here whole; the kernel
	 * refuses to redirect them (xdp_ok_fwd_dev), so it forwards them. On
	 * TC one is measured by the segments it will leave as. */
	if (pc->fib.mtu && hook_l3_wire_len(ctx, pc) > pc->fib.mtu)
		return STAT_PASS_OVER_MTU;
	return 0;
}

/* Rewrites and redirects; returns the hook's verdict. */
static __always_inline int forward_packet(hook_ctx *ctx, struct packet_ctx *pc)
{
	__u32 ifindex = pc->fib.ifindex;
	void *data, *data_end;
	struct ethhdr *eth;
	/* xdp_nat_prog decided before rewriting; don't decide twice. */
	int reason = pc->forward_checked ? 0 : forward_pass_reason(ctx, pc);

	if (reason) {
		count(reason);
		return HOOK_PASS;
	}
	if (pc->l3_off != sizeof(struct ethhdr) && vlan_pop(ctx, pc))
		goto internal;
	if (hook_untag(ctx))
		goto internal;

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		goto internal;
	__builtin_memcpy(eth->h_dest, pc->fib.dst_mac, 6);
	__builtin_memcpy(eth->h_source, pc->fib.src_mac, 6);
	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			goto internal;
		ipv4_decrement_ttl(&iph->ttl, &iph->check);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			goto internal;
		ip6->hop_limit--;
	}
	count_bytes(STAT_FORWARD, pc->l3_len);
	return hook_redirect(ctx, ifindex, pc->fib.flags);
internal:
	count_bytes(STAT_DROP_INTERNAL, pc->l3_len);
	return HOOK_DROP;
}

#endif
