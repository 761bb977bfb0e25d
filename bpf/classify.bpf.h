/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Policy classification (maps/policy.h): one lookup per field, each giving the
 * bitset of rules that field allows; AND them; the lowest set bit wins. The
 * cost depends on the bitset width in use, never on walking rules.
 */
#ifndef SLUICE_BPF_CLASSIFY_H
#define SLUICE_BPF_CLASSIFY_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "fib.bpf.h"

#define CLASSIFY_NO_MATCH 0xffffffffu

/* Index of the lowest set bit of a non-zero word (BPF has no ctz instruction). */
static __always_inline __u32 lowest_bit(__u64 w)
{
	__u32 n = 0;

	if (!(w & 0xffffffffull)) { n += 32; w >>= 32; }
	if (!(w & 0xffffull)) { n += 16; w >>= 16; }
	if (!(w & 0xffull)) { n += 8; w >>= 8; }
	if (!(w & 0xfull)) { n += 4; w >>= 4; }
	if (!(w & 0x3ull)) { n += 2; w >>= 2; }
	if (!(w & 0x1ull)) { n += 1; }
	return n;
}

static __always_inline __u32 proto_slot(__u8 protocol)
{
	switch (protocol) {
	case IPPROTO_TCP: return POLICY_PROTO_TCP;
	case IPPROTO_UDP: return POLICY_PROTO_UDP;
	case IPPROTO_ICMP: return POLICY_PROTO_ICMP;
	case IPPROTO_ICMPV6: return POLICY_PROTO_ICMPV6;
	default: return POLICY_PROTO_OTHER;
	}
}

/* The "port" an application matches on: destination port, ICMP type. */
static __always_inline __u32 classify_port(const struct packet_ctx *pc)
{
	switch (pc->protocol) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		return bpf_ntohs(flow_dst_port(pc));
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return pc->icmp_type;
	default:
		return 0;
	}
}

/* Lowest bit set in all four sets among the first `words` words. A global
 * (non-inlined) function: the verifier checks its loop once, on its own,
 * instead of once per path through the calling program. */
__noinline __u32 bitset_first_common(const struct policy_bitset *a, const struct policy_bitset *b,
				     const struct policy_bitset *c, const struct policy_bitset *d,
				     __u32 words)
{
	__u32 i;

	if (!a || !b || !c || !d)
		return CLASSIFY_NO_MATCH;
	for (i = 0; i < POLICY_BITSET_WORDS; i++) {
		__u64 w;

		if (i >= words)
			break;
		w = a->words[i] & b->words[i] & c->words[i] & d->words[i];
		if (w)
			return i * 64 + lowest_bit(w);
	}
	return CLASSIFY_NO_MATCH;
}

/* Returns the winning rule's bit index, or CLASSIFY_NO_MATCH. */
static __always_inline __u32 classify(const struct packet_ctx *pc, const struct runtime_config *cfg)
{
	__u8 gen = cfg->policy_generation & 1;
	struct policy_zone_pair_key zk = {};
	struct policy_bitset *zone_bits, *src_bits, *dst_bits, *app_bits;
	struct policy_app_key ak = {};
	__u32 port_index, *app_class;

	zk.from_zone = pc->zone_in;
	zk.to_zone = pc->zone_out;
	zk.generation = gen;
	zone_bits = bpf_map_lookup_elem(&pol_zone_pairs, &zk);
	if (!zone_bits)
		return CLASSIFY_NO_MATCH;

	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct policy_lpm_key_v4 k = {};

		k.prefixlen = 8 + 32;
		k.generation = gen;
		__builtin_memcpy(k.addr, &pc->key.v4.src_addr, 4);
		src_bits = bpf_map_lookup_elem(&pol_src_v4, &k);
		__builtin_memcpy(k.addr, flow_dst_addr(pc), 4);
		dst_bits = bpf_map_lookup_elem(&pol_dst_v4, &k);
	} else {
		struct policy_lpm_key_v6 k = {};

		k.prefixlen = 8 + 128;
		k.generation = gen;
		__builtin_memcpy(k.addr, pc->key.v6.src_addr, 16);
		src_bits = bpf_map_lookup_elem(&pol_src_v6, &k);
		__builtin_memcpy(k.addr, flow_dst_addr(pc), 16);
		dst_bits = bpf_map_lookup_elem(&pol_dst_v6, &k);
	}
	if (!src_bits || !dst_bits)
		return CLASSIFY_NO_MATCH;

	port_index = (__u32)gen * (POLICY_PROTO_SLOTS * POLICY_PORTS) +
		     proto_slot(pc->protocol) * POLICY_PORTS + (classify_port(pc) & 0xffff);
	app_class = bpf_map_lookup_elem(&pol_port_class, &port_index);
	if (!app_class)
		return CLASSIFY_NO_MATCH;
	ak.app_class = *app_class;
	ak.generation = gen;
	app_bits = bpf_map_lookup_elem(&pol_app_bits, &ak);
	if (!app_bits)
		return CLASSIFY_NO_MATCH;

	return bitset_first_common(zone_bits, src_bits, dst_bits, app_bits, cfg->policy_words[gen]);
	return CLASSIFY_NO_MATCH;
}

static __always_inline struct policy_rule *policy_rule_at(const struct runtime_config *cfg, __u32 rule)
{
	__u32 index = (__u32)(cfg->policy_generation & 1) * POLICY_MAX_RULES + rule;

	return bpf_map_lookup_elem(&pol_rules, &index);
}

static __always_inline void flow_cache_key_of(const struct packet_ctx *pc, struct flow_cache_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->family = pc->family;
	k->protocol = pc->protocol;
	k->zone_in = pc->zone_in;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		k->src_port = pc->key.v4.src_port;
		k->dst_port = pc->key.v4.dst_port;
		k->src_addr[0] = pc->key.v4.src_addr;
		k->dst_addr[0] = pc->key.v4.dst_addr;
	} else {
		k->src_port = pc->key.v6.src_port;
		k->dst_port = pc->key.v6.dst_port;
		__builtin_memcpy(k->src_addr, pc->key.v6.src_addr, 16);
		__builtin_memcpy(k->dst_addr, pc->key.v6.dst_addr, 16);
	}
}

#endif
