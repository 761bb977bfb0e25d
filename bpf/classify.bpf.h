/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Classification (maps/policy.h): five field lookups give class ids, four
 * cross-product lookups combine them, one array read gives the result. The
 * same code, whatever the rule count; only the scope differs between the
 * policy of a zone pair and the stateless filter of an interface.
 */
#ifndef SLUICE_BPF_CLASSIFY_H
#define SLUICE_BPF_CLASSIFY_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "fib.bpf.h"

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

/* The "port" rules match on: destination port, ICMP type, or the protocol. */
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
		return pc->protocol;
	}
}

static __always_inline __u32 classify_sport(const struct packet_ctx *pc)
{
	if (pc->protocol != IPPROTO_TCP && pc->protocol != IPPROTO_UDP)
		return 0;
	return bpf_ntohs(pc->family == SLUICE_FAMILY_IPV4 ? pc->key.v4.src_port : pc->key.v6.src_port);
}

static __always_inline __u32 class_at(void *map, __u32 index)
{
	__u32 *v = bpf_map_lookup_elem(map, &index);

	return v ? *v : 0;
}

/* Entry (left, right) of one cross-product table; class 0 (nothing allowed)
 * on either side means no rule. */
static __always_inline __u32 cross(const struct classifier_table_layout *t, __u32 left, __u32 right)
{
	if (!left || !right || right >= t->width)
		return 0;
	return class_at(&pol_cross, t->base + left * t->width + right);
}

/* The result for a packet in a scope, or NULL when no rule matches. */
static __always_inline struct classifier_result *classify_in(const struct packet_ctx *pc,
							       const struct runtime_config *cfg,
							       __u8 kind, __u16 a, __u16 b)
{
	__u8 gen = cfg->policy_generation & 1;
	const struct classifier_layout *lay = &cfg->classifier[gen];
	struct classifier_scope_key sk = {};
	__u32 scope, src, dst, dport, sport, slot_base, x, y, r, *v;

	sk.a = a;
	sk.b = b;
	sk.kind = kind;
	sk.generation = gen;
	v = bpf_map_lookup_elem(&pol_scopes, &sk);
	scope = v ? *v : 0;

	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct policy_lpm_key_v4 k = {};

		k.prefixlen = 8 + 32;
		k.generation = gen;
		__builtin_memcpy(k.addr, &pc->key.v4.src_addr, 4);
		v = bpf_map_lookup_elem(&pol_src_v4, &k);
		src = v ? *v : 0;
		__builtin_memcpy(k.addr, flow_dst_addr(pc), 4);
		v = bpf_map_lookup_elem(&pol_dst_v4, &k);
		dst = v ? *v : 0;
	} else {
		struct policy_lpm_key_v6 k = {};

		k.prefixlen = 8 + 128;
		k.generation = gen;
		__builtin_memcpy(k.addr, pc->key.v6.src_addr, 16);
		v = bpf_map_lookup_elem(&pol_src_v6, &k);
		src = v ? *v : 0;
		__builtin_memcpy(k.addr, flow_dst_addr(pc), 16);
		v = bpf_map_lookup_elem(&pol_dst_v6, &k);
		dst = v ? *v : 0;
	}

	slot_base = (__u32)gen * (POLICY_PROTO_SLOTS * POLICY_PORTS) + proto_slot(pc->protocol) * POLICY_PORTS;
	dport = class_at(&pol_port_class, slot_base + (classify_port(pc) & 0xffff));
	sport = class_at(&pol_sport_class, slot_base + (classify_sport(pc) & 0xffff));

	x = cross(&lay->table[CLASSIFIER_T_SCOPE_APP], scope, dport);
	x = cross(&lay->table[CLASSIFIER_T_SPORT], x, sport);
	y = cross(&lay->table[CLASSIFIER_T_SRC_DST], src, dst);
	r = cross(&lay->table[CLASSIFIER_T_FINAL], x, y);
	if (!r || r >= CLASSIFIER_MAX_RESULTS)
		return 0;
	r += (__u32)gen * CLASSIFIER_MAX_RESULTS;
	return bpf_map_lookup_elem(&pol_results, &r);
}

/* The policy of the packet's zone pair: its deciding rule, or NULL. */
static __always_inline struct classifier_result *classify_policy(const struct packet_ctx *pc,
								   const struct runtime_config *cfg)
{
	struct classifier_result *res = classify_in(pc, cfg, CLASSIFIER_SCOPE_POLICY, pc->zone_in, pc->zone_out);

	return res && res->rule != CLASSIFIER_NO_RULE ? res : 0;
}

/* A stateless filter (1-based id) on one packet: counts the rules it matched
 * and returns the action (FILTER_ACTION_ACCEPT when no rule decides). */
static __always_inline __u8 run_filter(const struct packet_ctx *pc, const struct runtime_config *cfg,
				       __u16 filter_id, __u64 bytes)
{
	struct classifier_result *res = classify_in(pc, cfg, CLASSIFIER_SCOPE_FILTER, filter_id, 0);
	__u32 base = (__u32)(cfg->policy_generation & 1) * FILTER_MAX_RULES;
	__u32 i;

	if (!res)
		return FILTER_ACTION_ACCEPT;
	for (i = 0; i < CLASSIFIER_MAX_COUNTED; i++) {
		struct filter_rule_counter *c;
		__u32 slot;

		if (i >= res->counted_n)
			break;
		slot = res->counted[i];
		if (slot >= FILTER_MAX_RULES)
			break;
		slot += base;
		c = bpf_map_lookup_elem(&filter_hits, &slot);
		if (c) {
			c->packets += 1;
			c->bytes += bytes;
		}
	}
	return res->action;
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
