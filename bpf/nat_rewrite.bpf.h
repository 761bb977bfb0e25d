/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rewriting a packet in XDP with the translation in pc->nat: addresses,
 * ports or ICMP echo identifier, and every checksum over them, updated
 * incrementally (RFC 1624).
 *
 * CHECKSUM_PARTIAL: a TCP/UDP packet from a local stack (veth, virtio in
 * generic mode) carries only the pseudo-header sum, uncomplemented, and the
 * kernel or NIC completes it on transmit over the bytes as they are then. XDP
 * cannot read ip_summed, so a field equal to the packet's pseudo-header sum is
 * taken as partial: it gets the address change only, the other way round, and
 * no port change (the final sum picks the new ports up). A complete checksum
 * equals that value by chance for about one packet in 65536; docs/nat.md says
 * so.
 */
#ifndef SLUICE_BPF_NAT_REWRITE_H
#define SLUICE_BPF_NAT_REWRITE_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "checksum.bpf.h"
#include "conntrack.bpf.h"
#include "hook.bpf.h"

/* Updates a TCP/UDP checksum field for an address change (pseudo-header,
 * addr_delta) and a port change (port_delta). pseudo_old is the old
 * pseudo-header sum, for telling a partial checksum apart. udp: a result of
 * 0 is sent as 0xffff (0 means "no checksum"); zero_is_none: a 0 field is
 * left alone (IPv4 UDP without a checksum). */
static __always_inline void l4_csum_update(__sum16 *field, __u64 pseudo_old, __u64 addr_delta,
					   __u64 port_delta, int udp, int zero_is_none, int may_be_partial)
{
	__u16 check = *field;
	__u16 out;

	if (zero_is_none && check == 0)
		return; /* IPv4 UDP without a checksum */
	if (may_be_partial && check == csum_fold_raw(pseudo_old)) {
		*field = csum_apply_partial(check, addr_delta);
		return;
	}
	out = csum_apply(check, addr_delta + port_delta);
	if (udp && out == 0)
		out = 0xffff;
	*field = out;
}

/* The L4 part of a translated packet: ports / echo id and the checksum. */
static __always_inline int nat_rewrite_l4(hook_ctx *ctx, struct packet_ctx *pc, __u64 pseudo_old,
					  __u64 addr_delta)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *l4 = data + clamp_offset(pc->l4_off);
	int partial = pc->frag == FRAG_NONE;

	if (pc->frag == FRAG_LATER)
		return 0; /* no L4 header; the first fragment's checksum covers it */
	if (pc->protocol == IPPROTO_TCP || pc->protocol == IPPROTO_UDP) {
		__be16 *ports = l4;
		__u64 port_delta;
		__sum16 *field;

		if (l4 + 8 > data_end)
			return -1;
		port_delta = csum_delta16(ports[0], pc->nat.new_src_port) +
			     csum_delta16(ports[1], pc->nat.new_dst_port);
		ports[0] = pc->nat.new_src_port;
		ports[1] = pc->nat.new_dst_port;
		if (pc->protocol == IPPROTO_UDP) {
			field = l4 + 6;
			l4_csum_update(field, pseudo_old, addr_delta, port_delta, 1,
				       pc->family == SLUICE_FAMILY_IPV4, partial);
			return 0;
		}
		if (l4 + 18 > data_end)
			return -1;
		field = l4 + 16;
		l4_csum_update(field, pseudo_old, addr_delta, port_delta, 0, 0, partial);
		return 0;
	}
	if ((pc->protocol == IPPROTO_ICMP && pc->family == SLUICE_FAMILY_IPV4) ||
	    (pc->protocol == IPPROTO_ICMPV6 && pc->family == SLUICE_FAMILY_IPV6)) {
		struct icmphdr *icmp = l4; /* same layout as icmp6hdr for echo */
		__u64 delta = pc->protocol == IPPROTO_ICMPV6 ? addr_delta : 0;
		__be16 id;

		if ((void *)(icmp + 1) > data_end)
			return -1;
		if (icmp->type == ICMP_ECHO || icmp->type == ICMPV6_ECHO_REQUEST)
			id = pc->nat.new_src_port;
		else if (icmp->type == ICMP_ECHOREPLY || icmp->type == ICMPV6_ECHO_REPLY)
			id = pc->nat.new_dst_port;
		else
			id = icmp->un.echo.id;
		delta += csum_delta16(icmp->un.echo.id, id);
		icmp->un.echo.id = id;
		icmp->checksum = csum_apply(icmp->checksum, delta);
	}
	return 0;
}

static __always_inline __u64 pseudo_sum(const struct packet_ctx *pc, __u64 addr_sum)
{
	__u32 l4_len = (__u32)pc->l3_off + pc->l3_len - pc->l4_off;

	if (pc->family == SLUICE_FAMILY_IPV4)
		return addr_sum + bpf_htons((__u16)pc->protocol) + bpf_htons((__u16)l4_len);
	return addr_sum + bpf_htonl(l4_len) + bpf_htonl((__u32)pc->protocol);
}

/* Rewrites a packet of a translated flow (not an ICMP error). 0 or -1. */
static __always_inline int nat_rewrite(hook_ctx *ctx, struct packet_ctx *pc)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 addr_delta, pseudo_old;

	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct iphdr *iph = data + clamp_offset(pc->l3_off);

		if ((void *)(iph + 1) > data_end)
			return -1;
		pseudo_old = pseudo_sum(pc, (__u64)iph->saddr + iph->daddr);
		addr_delta = csum_delta32(&iph->saddr, pc->nat.new_src_addr, 1) +
			     csum_delta32(&iph->daddr, pc->nat.new_dst_addr, 1);
		iph->saddr = pc->nat.new_src_addr[0];
		iph->daddr = pc->nat.new_dst_addr[0];
		iph->check = csum_apply(iph->check, addr_delta);
	} else {
		struct ipv6hdr *ip6 = data + clamp_offset(pc->l3_off);
		__be32 *s, *d;

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		s = (__be32 *)&ip6->saddr;
		d = (__be32 *)&ip6->daddr;
		pseudo_old = pseudo_sum(pc, (__u64)s[0] + s[1] + s[2] + s[3] + d[0] + d[1] + d[2] + d[3]);
		addr_delta = csum_delta32(s, pc->nat.new_src_addr, 4) + csum_delta32(d, pc->nat.new_dst_addr, 4);
		__builtin_memcpy(s, pc->nat.new_src_addr, 16);
		__builtin_memcpy(d, pc->nat.new_dst_addr, 16);
	}
	return nat_rewrite_l4(ctx, pc, pseudo_old, addr_delta);
}

/* The quoted packet's L4 header inside an ICMP error: ports or echo id and,
 * when quoted, its checksum. Returns the change to the ICMP message's sum. */
static __always_inline __u64 nat_rewrite_quoted_l4(struct packet_ctx *pc, void *l4, void *data_end,
						   __u64 inner_addr_delta, __u8 protocol)
{
	__u64 icmp_delta = 0;

	if (l4 + 8 > data_end)
		return 0;
	if (protocol == IPPROTO_TCP || protocol == IPPROTO_UDP) {
		__be16 *ports = l4;
		__u64 port_delta = csum_delta16(ports[0], pc->nat.new_dst_port) +
				   csum_delta16(ports[1], pc->nat.new_src_port);
		__sum16 *field = protocol == IPPROTO_UDP ? l4 + 6 : l4 + 16;

		ports[0] = pc->nat.new_dst_port;
		ports[1] = pc->nat.new_src_port;
		icmp_delta += port_delta;
		if ((void *)(field + 1) <= data_end) {
			__u16 old = *field;

			l4_csum_update(field, 0, inner_addr_delta, port_delta, protocol == IPPROTO_UDP,
				       protocol == IPPROTO_UDP, 0);
			icmp_delta += csum_delta16(old, *field);
		}
	} else if (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6) {
		struct icmphdr *icmp = l4;
		__u64 delta = protocol == IPPROTO_ICMPV6 ? inner_addr_delta : 0;
		__be16 id = icmp->un.echo.id;
		__u16 old;

		/* The quoted packet went the other way: its source side is
		 * this entry's destination side. */
		if (icmp->type == ICMP_ECHO || icmp->type == ICMPV6_ECHO_REQUEST)
			id = pc->nat.new_dst_port;
		else if (icmp->type == ICMP_ECHOREPLY || icmp->type == ICMPV6_ECHO_REPLY)
			id = pc->nat.new_src_port;
		delta += csum_delta16(icmp->un.echo.id, id);
		icmp_delta += csum_delta16(icmp->un.echo.id, id);
		icmp->un.echo.id = id;
		old = icmp->checksum;
		icmp->checksum = csum_apply(old, delta);
		icmp_delta += csum_delta16(old, icmp->checksum);
	}
	return icmp_delta;
}

/* An ICMP/ICMPv6 error about a translated flow. pc->nat is the translation of
 * the entry keyed by the reverse of the quoted tuple, i.e. of packets going
 * the way the error goes. The quoted packet is translated back (its source
 * becomes that entry's new destination, its destination the new source), the
 * outer destination follows when it is the quoted source, the outer source
 * when the error comes from the quoted destination itself. Works on the
 * packet bytes [data, data_end) of an XDP frame or of an skb (tc). */
static __always_inline int nat_rewrite_icmp_error(void *data, void *data_end, struct packet_ctx *pc)
{
	void *inner = data + clamp_offset(pc->inner_l3_off);
	void *inner_l4 = data + clamp_offset(pc->inner_l4_off);
	struct icmphdr *icmp = data + clamp_offset(pc->l4_off);
	__u64 inner_delta, icmp_delta, outer_delta;

	if ((void *)(icmp + 1) > data_end)
		return -1;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct iphdr *iph = data + clamp_offset(pc->l3_off);
		struct iphdr *in = inner;
		__be32 quoted_src, quoted_dst, os, od;
		__u16 old_check;

		if ((void *)(iph + 1) > data_end || (void *)(in + 1) > data_end)
			return -1;
		quoted_src = in->saddr;
		quoted_dst = in->daddr;
		inner_delta = csum_delta32(&in->saddr, pc->nat.new_dst_addr, 1) +
			      csum_delta32(&in->daddr, pc->nat.new_src_addr, 1);
		in->saddr = pc->nat.new_dst_addr[0];
		in->daddr = pc->nat.new_src_addr[0];
		old_check = in->check;
		in->check = csum_apply(old_check, inner_delta);
		icmp_delta = inner_delta + csum_delta16(old_check, in->check);
		icmp_delta += nat_rewrite_quoted_l4(pc, inner_l4, data_end, inner_delta, pc->inner_key.v4.protocol);

		os = iph->saddr == quoted_dst ? pc->nat.new_src_addr[0] : iph->saddr;
		od = iph->daddr == quoted_src ? pc->nat.new_dst_addr[0] : iph->daddr;
		outer_delta = csum_delta32(&iph->saddr, &os, 1) + csum_delta32(&iph->daddr, &od, 1);
		iph->saddr = os;
		iph->daddr = od;
		iph->check = csum_apply(iph->check, outer_delta);
	} else {
		struct ipv6hdr *ip6 = data + clamp_offset(pc->l3_off);
		struct ipv6hdr *in = inner;
		__be32 qs[4], qd[4], os[4], od[4];
		__be32 *s, *d;

		if ((void *)(ip6 + 1) > data_end || (void *)(in + 1) > data_end)
			return -1;
		__builtin_memcpy(qs, &in->saddr, 16);
		__builtin_memcpy(qd, &in->daddr, 16);
		inner_delta = csum_delta32(qs, pc->nat.new_dst_addr, 4) + csum_delta32(qd, pc->nat.new_src_addr, 4);
		__builtin_memcpy(&in->saddr, pc->nat.new_dst_addr, 16);
		__builtin_memcpy(&in->daddr, pc->nat.new_src_addr, 16);
		icmp_delta = inner_delta;
		icmp_delta += nat_rewrite_quoted_l4(pc, inner_l4, data_end, inner_delta, pc->inner_key.v6.protocol);

		s = (__be32 *)&ip6->saddr;
		d = (__be32 *)&ip6->daddr;
		__builtin_memcpy(os, s, 16);
		__builtin_memcpy(od, d, 16);
		if (os[0] == qd[0] && os[1] == qd[1] && os[2] == qd[2] && os[3] == qd[3])
			__builtin_memcpy(os, pc->nat.new_src_addr, 16);
		if (od[0] == qs[0] && od[1] == qs[1] && od[2] == qs[2] && od[3] == qs[3])
			__builtin_memcpy(od, pc->nat.new_dst_addr, 16);
		outer_delta = csum_delta32(s, os, 4) + csum_delta32(d, od, 4);
		__builtin_memcpy(s, os, 16);
		__builtin_memcpy(d, od, 16);
		icmp_delta += outer_delta; /* ICMPv6 covers the pseudo-header */
	}
	icmp->checksum = csum_apply(icmp->checksum, icmp_delta);
	return 0;
}

#endif
