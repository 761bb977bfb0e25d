/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Classification (maps/policy.h): five field lookups give class ids, four
 * cross-product lookups per group combine them, one array read per group
 * gives its result. The same code, whatever the rule count; only the scope differs between the
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

/* A field's classes; no entry = class 0 (no rule) in every group. Copied to
 * the stack so the group loop indexes plain values. */
static __always_inline void load_classes(struct classifier_classes *out, const struct classifier_classes *c)
{
	if (c)
		*out = *c;
	else
		__builtin_memset(out, 0, sizeof(*out));
}

/* Entry (left, right) of cross-product table `table`; class 0 (nothing
 * allowed) on either side means no rule. `sk` holds the generation and group
 * of the sparse key (one key on the stack serves every lookup). */
static __always_inline __u32 cross(const struct classifier_table_layout *t, struct classifier_sparse_key *sk,
				   __u32 table, __u32 left, __u32 right)
{
	__u32 index, *v;

	if (!left || !right)
		return 0;
	if (!t->width) {
		sk->left = left;
		sk->right = right;
		sk->table = table;
		v = bpf_map_lookup_elem(&pol_cross_sparse, sk);
		return v ? *v : 0;
	}
	if (right >= t->width)
		return 0;
	index = t->base + left * t->width + right;
	v = bpf_map_lookup_elem(&pol_cross, &index);
	return v ? *v : 0;
}

/* What a packet matched in a scope: each group's result (NULL = none), and
 * the deciding one — the lowest rule index, as rules are numbered in order. */
struct classifier_match {
	struct classifier_result *group[CLASSIFIER_GROUPS];
	struct classifier_result *winner;
};

static __always_inline void classify_in(const struct packet_ctx *pc, const struct runtime_config *cfg,
					__u8 kind, __u16 a, __u16 b, struct classifier_match *m)
{
	__u8 gen = cfg->policy_generation & 1;
	const struct classifier_layout *lay = &cfg->classifier[gen];
	struct classifier_classes scope, src, dst, dport, sport;
	struct classifier_scope_key sk = {};
	struct classifier_sparse_key xk = {};
	__u32 slot_base, index, g;
	void *v;

	m->winner = 0;
	for (g = 0; g < CLASSIFIER_GROUPS; g++)
		m->group[g] = 0;

	sk.a = a;
	sk.b = b;
	sk.kind = kind;
	sk.generation = gen;
	v = bpf_map_lookup_elem(&pol_scopes, &sk);
	if (!v)
		return;   /* no rule in this scope: nothing else to look up */
	load_classes(&scope, v);

	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct policy_lpm_key_v4 k = {};

		k.prefixlen = 8 + 32;
		k.generation = gen;
		__builtin_memcpy(k.addr, &pc->key.v4.src_addr, 4);
		load_classes(&src, bpf_map_lookup_elem(&pol_src_v4, &k));
		__builtin_memcpy(k.addr, flow_dst_addr(pc), 4);
		load_classes(&dst, bpf_map_lookup_elem(&pol_dst_v4, &k));
	} else {
		struct policy_lpm_key_v6 k = {};

		k.prefixlen = 8 + 128;
		k.generation = gen;
		__builtin_memcpy(k.addr, pc->key.v6.src_addr, 16);
		load_classes(&src, bpf_map_lookup_elem(&pol_src_v6, &k));
		__builtin_memcpy(k.addr, flow_dst_addr(pc), 16);
		load_classes(&dst, bpf_map_lookup_elem(&pol_dst_v6, &k));
	}

	slot_base = (__u32)gen * (POLICY_PROTO_SLOTS * POLICY_PORTS) + proto_slot(pc->protocol) * POLICY_PORTS;
	index = slot_base + (classify_port(pc) & 0xffff);
	load_classes(&dport, bpf_map_lookup_elem(&pol_port_class, &index));
	index = slot_base + (classify_sport(pc) & 0xffff);
	load_classes(&sport, bpf_map_lookup_elem(&pol_sport_class, &index));
	xk.generation = gen;

#pragma unroll
	for (g = 0; g < CLASSIFIER_GROUPS; g++) {
		const struct classifier_table_layout *t = lay->table[g];
		struct classifier_result *res;
		__u32 x, y, r;

		if (g >= lay->groups)
			break;
		xk.group = g;
		x = cross(&t[CLASSIFIER_T_SCOPE_APP], &xk, CLASSIFIER_T_SCOPE_APP, scope.group[g], dport.group[g]);
		x = cross(&t[CLASSIFIER_T_SPORT], &xk, CLASSIFIER_T_SPORT, x, sport.group[g]);
		if (!x)
			continue;
		y = cross(&t[CLASSIFIER_T_SRC_DST], &xk, CLASSIFIER_T_SRC_DST, src.group[g], dst.group[g]);
		r = cross(&t[CLASSIFIER_T_FINAL], &xk, CLASSIFIER_T_FINAL, x, y);
		if (!r || r >= CLASSIFIER_MAX_RESULTS)
			continue;
		r += (__u32)gen * CLASSIFIER_MAX_RESULTS;
		res = bpf_map_lookup_elem(&pol_results, &r);
		m->group[g] = res;
		if (res && res->rule != CLASSIFIER_NO_RULE && (!m->winner || res->rule < m->winner->rule))
			m->winner = res;
	}
}

/* The policy of the packet's zone pair: its deciding rule, or NULL. */
static __always_inline struct classifier_result *classify_policy(const struct packet_ctx *pc,
								   const struct runtime_config *cfg)
{
	struct classifier_match m;

	classify_in(pc, cfg, CLASSIFIER_SCOPE_POLICY, pc->zone_in, pc->zone_out, &m);
	return m.winner;
}

/* A stateless filter (1-based id) on one packet: counts the rules it matched
 * up to and including the deciding one, and returns the action
 * (FILTER_ACTION_ACCEPT when no rule decides). Each group's result lists the
 * counting rules of that group before its own decider; the rules of all
 * groups after the winner are left out here. */
static __always_inline __u8 run_filter(const struct packet_ctx *pc, const struct runtime_config *cfg,
				       __u16 filter_id, __u64 bytes)
{
	__u32 base = (__u32)(cfg->policy_generation & 1) * FILTER_MAX_RULES;
	struct classifier_match m;
	__u32 last, g, i;

	classify_in(pc, cfg, CLASSIFIER_SCOPE_FILTER, filter_id, 0, &m);
	last = m.winner ? m.winner->rule : CLASSIFIER_NO_RULE;
	for (g = 0; g < CLASSIFIER_GROUPS; g++) {
		struct classifier_result *res = m.group[g];

		if (!res)
			continue;
		for (i = 0; i < CLASSIFIER_MAX_COUNTED; i++) {
			struct filter_rule_counter *c;
			__u32 slot;

			if (i >= res->counted_n)
				break;
			slot = res->counted[i];
			if (slot >= FILTER_MAX_RULES || slot > last)
				break;
			slot += base;
			c = bpf_map_lookup_elem(&filter_hits, &slot);
			if (c) {
				c->packets += 1;
				c->bytes += bytes;
			}
		}
	}
	return m.winner ? m.winner->action : FILTER_ACTION_ACCEPT;
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
