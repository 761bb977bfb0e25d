/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Route + neighbour resolution through bpf_fib_lookup, into packet_ctx.fib. */
#ifndef SLUICE_BPF_FIB_H
#define SLUICE_BPF_FIB_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.bpf.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

/* The destination the flow is routed and classified by: after destination
 * NAT, the translated one. */
static __always_inline const __be32 *flow_dst_addr(const struct packet_ctx *pc)
{
	if (pc->nat.flags & SESSION_NAT_DST)
		return pc->nat.new_dst_addr;
	return pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.dst_addr : pc->key.v6.dst_addr;
}

static __always_inline __be16 flow_dst_port(const struct packet_ctx *pc)
{
	if (pc->nat.flags & SESSION_NAT_DST)
		return pc->nat.new_dst_port;
	return pc->family == SLUICE_FAMILY_IPV4 ? pc->key.v4.dst_port : pc->key.v6.dst_port;
}

/* The packet's own addresses and ports, as on the wire. */
static __always_inline const __be32 *src_addr_of(const struct packet_ctx *pc)
{
	return pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.src_addr : pc->key.v6.src_addr;
}

static __always_inline const __be32 *dst_addr_of(const struct packet_ctx *pc)
{
	return pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.dst_addr : pc->key.v6.dst_addr;
}

static __always_inline __be16 src_port_of(const struct packet_ctx *pc)
{
	return pc->family == SLUICE_FAMILY_IPV4 ? pc->key.v4.src_port : pc->key.v6.src_port;
}

static __always_inline __be16 dst_port_of(const struct packet_ctx *pc)
{
	return pc->family == SLUICE_FAMILY_IPV4 ? pc->key.v4.dst_port : pc->key.v6.dst_port;
}

/* What the cached result says of its egress port (enum session_fib_flags),
 * taken once with the result: in tx_ports, and a veth with a remote peer. */
static __always_inline __u16 fib_port_flags(__u32 ifindex)
{
	if (!bpf_map_lookup_elem(&tx_ports, &ifindex))
		return 0;
	return SESSION_FIB_XMIT | (bpf_map_lookup_elem(&peer_ports, &ifindex) ? SESSION_FIB_PEER : 0);
}

/* Runs bpf_fib_lookup for pc's tuple (translated destination) arriving on
 * ingress_ifindex, for packets of tot_len bytes (the MTU check). On SUCCESS
 * fills pc->fib and sets fib_valid. On NO_NEIGH the egress ifindex is still
 * filled (policy needs the egress zone). Returns the BPF_FIB_LKUP_RET_* code. */
static __always_inline int fib_resolve(void *ctx, struct packet_ctx *pc, __u32 ingress_ifindex, __u32 tot_len)
{
	struct bpf_fib_lookup p = {};
	int rc;

	p.ifindex = ingress_ifindex;
	p.l4_protocol = pc->protocol;
	p.tot_len = tot_len;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		p.family = AF_INET;
		p.ipv4_src = pc->key.v4.src_addr;
		p.ipv4_dst = flow_dst_addr(pc)[0];
		p.sport = pc->key.v4.src_port;
		p.dport = flow_dst_port(pc);
	} else {
		p.family = AF_INET6;
		__builtin_memcpy(p.ipv6_src, pc->key.v6.src_addr, 16);
		__builtin_memcpy(p.ipv6_dst, flow_dst_addr(pc), 16);
		p.sport = pc->key.v6.src_port;
		p.dport = flow_dst_port(pc);
	}
	count(STAT_FIB_LOOKUP);
	rc = bpf_fib_lookup(ctx, &p, sizeof(p), 0);
	pc->fib_valid = 0;
	if (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		pc->fib.ifindex = p.ifindex;
		if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
			__builtin_memcpy(pc->fib.dst_mac, p.dmac, 6);
			__builtin_memcpy(pc->fib.src_mac, p.smac, 6);
			pc->fib.mtu = p.mtu_result;
			pc->fib.flags = fib_port_flags(p.ifindex);
			pc->fib_valid = 1;
		}
	}
	return rc;
}

/* Destinations that never leave the link: for the kernel, not for policy. */
static __always_inline int dst_is_link_scope(const struct packet_ctx *pc)
{
	if (pc->link_local)
		return 1;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		__u32 dst = bpf_ntohl(pc->key.v4.dst_addr);

		return (dst >> 28) == 0xe || dst == 0xffffffff;
	}
	{
		__u8 first = ((const __u8 *)pc->key.v6.dst_addr)[0];
		__u8 second = ((const __u8 *)pc->key.v6.dst_addr)[1];

		return first == 0xff || (first == 0xfe && (second & 0xc0) == 0x80);
	}
}

#endif
