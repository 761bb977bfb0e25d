/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Choosing a flow's translation on its first packet (maps/nat.h has the
 * order): destination first, so route and policy see where the flow really
 * goes; source after the policy admitted the flow. The result is pc->nat,
 * which session_create stores in both entries.
 */
#ifndef SLUICE_BPF_NAT_PLAN_H
#define SLUICE_BPF_NAT_PLAN_H

#include "maps.bpf.h"
#include "checksum.bpf.h"
#include "conntrack.bpf.h"
#include "fib.bpf.h"
#include "classify.bpf.h"
#include "hash.bpf.h"

/* Fills pc->nat with the untranslated tuple, for a plan to change parts of. */
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

static __always_inline void nat_start(struct packet_ctx *pc)
{
	if (pc->nat.flags & SESSION_NAT_ANY)
		return;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		pc->nat.new_src_addr[0] = pc->key.v4.src_addr;
		pc->nat.new_dst_addr[0] = pc->key.v4.dst_addr;
		pc->nat.new_src_port = pc->key.v4.src_port;
		pc->nat.new_dst_port = pc->key.v4.dst_port;
	} else {
		__builtin_memcpy(pc->nat.new_src_addr, pc->key.v6.src_addr, 16);
		__builtin_memcpy(pc->nat.new_dst_addr, pc->key.v6.dst_addr, 16);
		pc->nat.new_src_port = pc->key.v6.src_port;
		pc->nat.new_dst_port = pc->key.v6.dst_port;
	}
}

/* Replaces the first prefix_len bits of addr (16 bytes, IPv4 in the first 4)
 * with those of `to`. For NPTv6 (RFC 6296 section 3.2) one 16-bit word outside
 * the prefix then absorbs the difference so the address's one's-complement
 * sum, and with it every checksum over it, is unchanged. Returns 0, or -1 for
 * an address NPTv6 cannot map (every candidate word is 0xffff). */
static __always_inline int prefix_translate(__be32 *addr, const struct nat_prefix_value *v)
{
	__u8 *bytes = (__u8 *)addr;
	__u32 len = v->prefix_len;
	__u16 *words = (__u16 *)addr;
	__u64 adj = 0;
	int i, k = -1;

	for (i = 0; i < 16; i++) {
		__u32 bit = i * 8;

		if (bit + 8 <= len) {
			bytes[i] = v->to[i];
		} else if (bit < len) {
			__u8 mask = (__u8)(0xff << (8 - (len - bit)));

			bytes[i] = (v->to[i] & mask) | (bytes[i] & ~mask);
		}
	}
	if (v->kind != NAT_PREFIX_NPTV6)
		return 0;
	for (i = 0; i < 8; i++)
		adj += csum_delta16(((const __u16 *)v->to)[i], ((const __u16 *)v->from)[i]);
	if (len <= 48) {
		k = 3;
	} else {
		for (i = 4; i < 8; i++) {
			if (words[i] != 0xffff) {
				k = i;
				break;
			}
		}
	}
	if (k < 0)
		return -1;
	k &= 7;
	words[k] = csum_fold_raw((__u64)words[k] + csum_fold_raw(adj));
	if (words[k] == 0xffff)
		words[k] = 0;
	return 0;
}

static __always_inline struct nat_prefix_value *prefix_lookup(__u8 family, __u8 generation,
							       const __be32 *addr, int inbound)
{
	if (family == SLUICE_FAMILY_IPV4) {
		struct policy_lpm_key_v4 k = { .prefixlen = 8 + 32, .generation = generation };

		__builtin_memcpy(k.addr, addr, 4);
		return bpf_map_lookup_elem(inbound ? (void *)&nat_map_in_v4 : (void *)&nat_map_out_v4, &k);
	} else {
		struct policy_lpm_key_v6 k = { .prefixlen = 8 + 128, .generation = generation };

		__builtin_memcpy(k.addr, addr, 16);
		return bpf_map_lookup_elem(inbound ? (void *)&nat_map_in_v6 : (void *)&nat_map_out_v6, &k);
	}
}

/* Destination NAT and the inbound half of static/NPTv6. Returns 0 or a drop
 * reason; pc->nat gains SESSION_NAT_DST when a rule matched. */
static __always_inline int nat_plan_destination(struct packet_ctx *pc, const struct runtime_config *cfg)
{
	struct nat_dst_key k = {};
	struct nat_dst_value *d;
	struct nat_prefix_value *p;
	__be16 port = flow_dst_port(pc);

	k.family = pc->family;
	k.generation = cfg->policy_generation & 1;
	k.zone_in = pc->zone_in;
	k.protocol = pc->protocol;
	if (pc->family == SLUICE_FAMILY_IPV4)
		k.addr[0] = flow_dst_addr(pc)[0];
	else
		__builtin_memcpy(k.addr, flow_dst_addr(pc), 16);
	k.port = (pc->protocol == IPPROTO_TCP || pc->protocol == IPPROTO_UDP) ? port : 0;
	d = bpf_map_lookup_elem(&nat_dst, &k);
	if (!d && k.port) {
		k.port = 0;
		d = bpf_map_lookup_elem(&nat_dst, &k);
	}
	if (!d) {
		k.protocol = 0;
		d = bpf_map_lookup_elem(&nat_dst, &k);
	}
	if (d) {
		nat_start(pc);
		__builtin_memcpy(pc->nat.new_dst_addr, d->addr, 16);
		if (d->port)
			pc->nat.new_dst_port = d->port;
		pc->nat.flags |= SESSION_NAT_DST;
		return 0;
	}
	p = prefix_lookup(pc->family, cfg->policy_generation & 1, k.addr, 1);
	if (!p)
		return 0;
	nat_start(pc);
	if (prefix_translate(pc->nat.new_dst_addr, p))
		return STAT_DROP_NPTV6_UNMAPPABLE;
	pc->nat.flags |= SESSION_NAT_DST;
	return 0;
}

static __always_inline __u64 rule_bits_lpm(void *map, __u8 family, __u8 generation, const __be32 *addr)
{
	struct nat_rule_bits *b;

	if (family == SLUICE_FAMILY_IPV4) {
		struct policy_lpm_key_v4 k = { .prefixlen = 8 + 32, .generation = generation };

		__builtin_memcpy(k.addr, addr, 4);
		b = bpf_map_lookup_elem(map, &k);
	} else {
		struct policy_lpm_key_v6 k = { .prefixlen = 8 + 128, .generation = generation };

		__builtin_memcpy(k.addr, addr, 16);
		b = bpf_map_lookup_elem(map, &k);
	}
	return b ? b->bits : 0;
}

/* The first source rule matching the flow (zone pair, source, translated
 * destination), or 0. */
static __always_inline struct nat_source_rule *source_rule_match(struct packet_ctx *pc,
								  const struct runtime_config *cfg)
{
	struct policy_zone_pair_key zk = {};
	struct nat_rule_bits *zb;
	const __be32 *src = pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.src_addr : pc->key.v6.src_addr;
	__u8 gen = cfg->policy_generation & 1;
	__u64 bits;
	__u32 idx;

	zk.from_zone = pc->zone_in;
	zk.to_zone = pc->zone_out;
	zk.generation = gen;
	zb = bpf_map_lookup_elem(&nat_src_zones, &zk);
	if (!zb || !zb->bits)
		return 0;
	bits = zb->bits;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		bits &= rule_bits_lpm(&nat_src_s4, pc->family, gen, src);
		if (bits)
			bits &= rule_bits_lpm(&nat_src_d4, pc->family, gen, flow_dst_addr(pc));
	} else {
		bits &= rule_bits_lpm(&nat_src_s6, pc->family, gen, src);
		if (bits)
			bits &= rule_bits_lpm(&nat_src_d6, pc->family, gen, flow_dst_addr(pc));
	}
	if (!bits)
		return 0;
	idx = gen * NAT_MAX_SOURCE_RULES + lowest_bit(bits);
	return bpf_map_lookup_elem(&nat_src_rules, &idx);
}

/* A pool address for this flow: by the source host (persistent) or at random. */
static __always_inline int pool_pick(const struct packet_ctx *pc, const struct nat_pool *pool, __be32 *out)
{
	__u32 n = pool->address_count, idx;
	int i;

	if (!n)
		return -1;
	if (pool->flags & NAT_POOL_PERSISTENT) {
		/* Hosts of one subnet differ in their last bits, so those must
		 * reach the low bits the modulo keeps. */
		const __u32 *w = pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.src_addr : pc->key.v6.src_addr;
		__u32 h = hash_mix32(bpf_ntohl(w[0]));

		if (pc->family == SLUICE_FAMILY_IPV6) {
			h = hash_mix32(h ^ bpf_ntohl(w[1]));
			h = hash_mix32(h ^ bpf_ntohl(w[2]));
			h = hash_mix32(h ^ bpf_ntohl(w[3]));
		}
		idx = h % n;
	} else {
		idx = bpf_get_prandom_u32() % n;
	}
	for (i = 0; i < NAT_POOL_MAX_RANGES; i++) {
		const struct nat_pool_range *r = &pool->ranges[i];

		if (idx < r->count) {
			int last = pc->family == SLUICE_FAMILY_IPV4 ? 0 : 3;

			__builtin_memcpy(out, r->first, 16);
			out[last & 3] = bpf_htonl(bpf_ntohl(r->first[last & 3]) + idx);
			return 0;
		}
		idx -= r->count;
	}
	return -1;
}

/* Reserves a free port on addr in [first, last] for the flow, starting at a
 * random place (RFC 6056), trying NAT_PORT_PROBES consecutive ports. The
 * reservation is inserted with BPF_NOEXIST, so two CPUs never get one port. */
static __always_inline int port_reserve(struct packet_ctx *pc, const __be32 *addr, __u16 first, __u16 last,
					__u32 rule_id, __u64 now)
{
	struct nat_port_key pk = {};
	struct nat_port_value pv = {};
	__u32 range, start, i;

	if (last < first)
		return -1;
	range = (__u32)last - first + 1;
	start = bpf_get_prandom_u32() % range;
	__builtin_memcpy(pk.addr, addr, 16);
	pk.protocol = pc->protocol;
	pk.family = pc->family;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		pv.inside_addr[0] = pc->key.v4.src_addr;
		pv.inside_port = pc->key.v4.src_port;
	} else {
		__builtin_memcpy(pv.inside_addr, pc->key.v6.src_addr, 16);
		pv.inside_port = pc->key.v6.src_port;
	}
	pv.rule_id = rule_id;
	pv.created_ns = now;
#pragma clang loop unroll(disable)
	for (i = 0; i < NAT_PORT_PROBES; i++) {
		if (i >= range)
			break;
		pk.port = bpf_htons((__u16)(first + (start + i) % range));
		if (!bpf_map_update_elem(&nat_ports, &pk, &pv, BPF_NOEXIST)) {
			pc->nat.new_src_port = pk.port;
			pc->nat.flags |= SESSION_NAT_PORT_HELD;
			return 0;
		}
	}
	return -1;
}

/* Whether the flow has ports (or an echo identifier) to translate. */
static __always_inline int nat_has_port(const struct packet_ctx *pc)
{
	if (pc->protocol == IPPROTO_TCP || pc->protocol == IPPROTO_UDP)
		return 1;
	if (pc->protocol == IPPROTO_ICMP && pc->family == SLUICE_FAMILY_IPV4)
		return pc->icmp_type == ICMP_ECHO;
	if (pc->protocol == IPPROTO_ICMPV6 && pc->family == SLUICE_FAMILY_IPV6)
		return pc->icmp_type == ICMPV6_ECHO_REQUEST;
	return 0;
}

/* Source translation for a flow policy admitted. Returns 0 or a drop reason;
 * a reserved port is recorded in pc->nat (SESSION_NAT_PORT_HELD). */
static __always_inline int nat_plan_source(struct packet_ctx *pc, const struct runtime_config *cfg, __u64 now)
{
	const __be32 *src = pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.src_addr : pc->key.v6.src_addr;
	struct nat_source_rule *rule;
	struct nat_prefix_value *p;
	__be32 addr[4] = {};
	__u16 first, last;

	/* Static / NPTv6 outbound: a mapped host leaving its zone. */
	if (pc->zone_in != pc->zone_out) {
		p = prefix_lookup(pc->family, cfg->policy_generation & 1, src, 0);
		if (p) {
			nat_start(pc);
			if (prefix_translate(pc->nat.new_src_addr, p))
				return STAT_DROP_NPTV6_UNMAPPABLE;
			pc->nat.flags |= SESSION_NAT_SRC;
			return 0;
		}
	}
	rule = source_rule_match(pc, cfg);
	if (!rule)
		return 0;
	if (rule->kind == NAT_SOURCE_INTERFACE) {
		__u32 ifindex = pc->fib.ifindex;
		struct nat_ifaddr *ia = bpf_map_lookup_elem(&nat_ifaddrs, &ifindex);

		if (!ia)
			return STAT_DROP_NAT_NO_ADDRESS;
		if (pc->family == SLUICE_FAMILY_IPV4) {
			if (!ia->has_v4)
				return STAT_DROP_NAT_NO_ADDRESS;
			addr[0] = ia->v4;
		} else {
			if (!ia->has_v6)
				return STAT_DROP_NAT_NO_ADDRESS;
			__builtin_memcpy(addr, ia->v6, 16);
		}
		first = ia->port_first;
		last = ia->port_last;
	} else {
		__u32 slot = (cfg->policy_generation & 1) * NAT_POOL_SLOTS +
			     (rule->pool_index % NAT_MAX_POOLS) * 2 + (pc->family == SLUICE_FAMILY_IPV6);
		struct nat_pool *pool = bpf_map_lookup_elem(&nat_pools, &slot);

		if (!pool || pool_pick(pc, pool, addr))
			return STAT_DROP_NAT_NO_ADDRESS;
		first = pool->port_first;
		last = pool->port_last;
	}
	nat_start(pc);
	__builtin_memcpy(pc->nat.new_src_addr, addr, 16);
	pc->nat.flags |= SESSION_NAT_SRC;
	if (nat_has_port(pc)) {
		if (port_reserve(pc, addr, first, last, rule->rule_id, now))
			return STAT_DROP_NAT_PORTS_EXHAUSTED;
		count(STAT_NAT_PORT_ALLOCATED);
	}
	return 0;
}

#endif
