/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The same translation for packets the kernel forwards (tc_egress_prog). XDP
 * leaves source translation to this point when it hands a packet to the
 * kernel (e.g. a GRO aggregate larger than the egress MTU), because the
 * kernel must route and, if need be, answer with ICMP the untranslated
 * packet. Here the skb knows its checksum state, so the kernel's own helpers
 * update the checksums (BPF_F_PSEUDO_HDR handles CHECKSUM_PARTIAL).
 */
#ifndef SLUICE_BPF_NAT_TC_H
#define SLUICE_BPF_NAT_TC_H

#include <linux/pkt_cls.h>
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "conntrack.bpf.h"
#include "nat_rewrite.bpf.h"

static __always_inline int nat_rewrite_skb(struct __sk_buff *skb, const struct packet_ctx *pc)
{
	__u32 l3 = pc->l3_off, l4 = pc->l4_off, csum_off, flags = 0;
	__be32 old[8] = {}, new[8] = {};
	__be16 old_port[2], new_port[2];
	__s64 diff;

	if (pc->family == SLUICE_FAMILY_IPV4) {
		old[0] = pc->key.v4.src_addr;
		old[1] = pc->key.v4.dst_addr;
		new[0] = pc->nat.new_src_addr[0];
		new[1] = pc->nat.new_dst_addr[0];
		old_port[0] = pc->key.v4.src_port;
		old_port[1] = pc->key.v4.dst_port;
		diff = bpf_csum_diff(old, 8, new, 8, 0);
		if (bpf_skb_store_bytes(skb, l3 + offsetof(struct iphdr, saddr), new, 8, 0) ||
		    bpf_l3_csum_replace(skb, l3 + offsetof(struct iphdr, check), 0, diff, 0))
			return -1;
	} else {
		__builtin_memcpy(old, pc->key.v6.src_addr, 16);
		__builtin_memcpy(old + 4, pc->key.v6.dst_addr, 16);
		__builtin_memcpy(new, pc->nat.new_src_addr, 16);
		__builtin_memcpy(new + 4, pc->nat.new_dst_addr, 16);
		old_port[0] = pc->key.v6.src_port;
		old_port[1] = pc->key.v6.dst_port;
		diff = bpf_csum_diff(old, 32, new, 32, 0);
		if (bpf_skb_store_bytes(skb, l3 + offsetof(struct ipv6hdr, saddr), new, 32, 0))
			return -1;
	}
	new_port[0] = pc->nat.new_src_port;
	new_port[1] = pc->nat.new_dst_port;
	if (pc->frag == FRAG_LATER)
		return 0;

	switch (pc->protocol) {
	case IPPROTO_UDP:
		flags = BPF_F_MARK_MANGLED_0;
		csum_off = l4 + offsetof(struct udphdr, check);
		goto ports;
	case IPPROTO_TCP:
		csum_off = l4 + offsetof(struct tcphdr, check);
ports:
		if (bpf_l4_csum_replace(skb, csum_off, 0, diff, flags | BPF_F_PSEUDO_HDR) ||
		    bpf_l4_csum_replace(skb, csum_off, old_port[0], new_port[0], flags | 2) ||
		    bpf_l4_csum_replace(skb, csum_off, old_port[1], new_port[1], flags | 2) ||
		    bpf_skb_store_bytes(skb, l4, new_port, 4, 0))
			return -1;
		return 0;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		__be16 old_id, new_id;

		if (pc->icmp_type == ICMP_ECHO || pc->icmp_type == ICMPV6_ECHO_REQUEST) {
			old_id = old_port[0];
			new_id = new_port[0];
		} else if (pc->icmp_type == ICMP_ECHOREPLY || pc->icmp_type == ICMPV6_ECHO_REPLY) {
			old_id = old_port[1];
			new_id = new_port[1];
		} else {
			old_id = new_id = 0;
		}
		csum_off = l4 + 2;
		if (pc->protocol == IPPROTO_ICMPV6 &&
		    bpf_l4_csum_replace(skb, csum_off, 0, diff, BPF_F_PSEUDO_HDR))
			return -1;
		if (old_id != new_id &&
		    (bpf_l4_csum_replace(skb, csum_off, old_id, new_id, 2) ||
		     bpf_skb_store_bytes(skb, l4 + 4, &new_id, 2, 0)))
			return -1;
		return 0;
	}
	default:
		return 0;
	}
}

/* An ICMP error leaving through the kernel: one it forwarded, or one it made
 * itself about a packet XDP had translated and handed over (TTL expired,
 * too big, no neighbour). The latter quotes the translated packet, which
 * the sender never saw: translate it the way XDP translates errors, with
 * the entry of the quoted packet's reverse. An error XDP already translated
 * quotes the untranslated side of its flow, whose reverse is no entry's key,
 * so nothing is translated twice. */
static __always_inline int nat_tc_icmp_error(struct __sk_buff *skb, struct packet_ctx *pc)
{
	union session_key back;
	struct session_value *s;

	reverse_tuple(pc->family, &pc->inner_key, &back);
	s = session_lookup(pc->family, &back);
	if (!s || !(s->nat.flags & SESSION_NAT_ANY))
		return TC_ACT_OK;
	pc->nat = s->nat;
	if (nat_rewrite_icmp_error((void *)(long)skb->data, (void *)(long)skb->data_end, pc)) {
		count_bytes(STAT_DROP_INTERNAL, pc->l3_len);
		return TC_ACT_SHOT;
	}
	count(STAT_NAT_ICMP_ERROR);
	return TC_ACT_OK;
}

#endif
