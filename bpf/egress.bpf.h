/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Egress by name (maps/egress.h, docs/egress.md): what a scope's new flows
 * may do. Only first packets come here (xdp_policy_prog), so an established
 * session outlives its address's expiry.
 */
#ifndef SLUICE_BPF_EGRESS_H
#define SLUICE_BPF_EGRESS_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "maps.bpf.h"

#define EGRESS_DNS_PORT 53
#define EGRESS_DOT_PORT 853

/* egress_judge's verdicts besides a STAT_DROP_* reason. */
#define EGRESS_PASS 0
#define EGRESS_STEER_DNS 1
#define EGRESS_VERIFY_SNI 2 /* passes, through the stage's SNI check */

static __always_inline struct egress_config *egress_config(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&egress_cfg, &key);
}

/* The scope governing a new flow's source, or NULL. */
static __always_inline struct egress_scope_ref *egress_scope_of(const struct packet_ctx *pc)
{
	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct egress_source_key_v4 k = {
			.prefixlen = 64,
			.zone = bpf_htonl(pc->zone_in),
			.addr = pc->key.v4.src_addr,
		};

		return bpf_map_lookup_elem(&egress_src_v4, &k);
	} else {
		struct egress_source_key_v6 k = { .prefixlen = 160, .zone = bpf_htonl(pc->zone_in) };

		__builtin_memcpy(k.addr, pc->key.v6.src_addr, 16);
		return bpf_map_lookup_elem(&egress_src_v6, &k);
	}
}

static __always_inline int egress_port_in(const struct egress_port_range *r, int ported, __u16 port)
{
	/* A protocol without ports passes only a rule for every port. */
	if (!ported)
		return r->first == 0 && r->last == 0xffff;
	return port >= r->first && port <= r->last;
}

static __always_inline struct egress_prefix_rules *egress_prefix_rules(const struct packet_ctx *pc, __u32 scope)
{
	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct egress_source_key_v4 k = {
			.prefixlen = 64,
			.zone = bpf_htonl(scope),
			.addr = pc->key.v4.dst_addr,
		};

		return bpf_map_lookup_elem(&egress_pfx_v4, &k);
	} else {
		struct egress_source_key_v6 k = { .prefixlen = 160, .zone = bpf_htonl(scope) };

		__builtin_memcpy(k.addr, pc->key.v6.dst_addr, 16);
		return bpf_map_lookup_elem(&egress_pfx_v6, &k);
	}
}

static __always_inline struct egress_learned *egress_learned_of(const struct packet_ctx *pc, __u32 scope)
{
	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct egress_learned_key_v4 k = { .scope = scope, .addr = pc->key.v4.dst_addr };

		return bpf_map_lookup_elem(&egress_learn_v4, &k);
	} else {
		struct egress_learned_key_v6 k = { .scope = scope };

		__builtin_memcpy(k.addr, pc->key.v6.dst_addr, 16);
		return bpf_map_lookup_elem(&egress_learn_v6, &k);
	}
}

static __always_inline int egress_learned_ports_ok(const struct egress_learned *learned, int ported, __u16 port)
{
	int i, ok = !learned->port_ranges;

#pragma unroll
	for (i = 0; i < SLUICE_EGRESS_PORT_RANGES; i++)
		if (i < learned->port_ranges && egress_port_in(&learned->ports[i], ported, port))
			ok = 1;
	return ok;
}

/* A governed source's new flow: its DNS goes to the proxy, DNS over TLS
 * nowhere; anything else to an address rule's verdict for its port, else to
 * a learned address (not expired, on its ports), else the scope's default. */
static __always_inline int egress_judge(const struct packet_ctx *pc, const struct egress_scope_ref *scope, __u64 now)
{
	int ported = pc->protocol == IPPROTO_TCP || pc->protocol == IPPROTO_UDP;
	__u16 port = ported ? bpf_ntohs(pc->family == SLUICE_FAMILY_IPV4 ? pc->key.v4.dst_port : pc->key.v6.dst_port)
			    : 0;
	struct egress_prefix_rules *rules;
	struct egress_learned *learned;
	int i;

	if (ported && port == EGRESS_DNS_PORT)
		return EGRESS_STEER_DNS;
	if (ported && port == EGRESS_DOT_PORT)
		return STAT_DROP_EGRESS_DOT;
	rules = egress_prefix_rules(pc, scope->scope_id);
	if (rules) {
#pragma unroll
		for (i = 0; i < SLUICE_EGRESS_PORT_RANGES; i++) {
			if (i >= rules->count)
				break;
			if (egress_port_in(&rules->rules[i].ports, ported, port))
				return rules->rules[i].allow ? EGRESS_PASS : STAT_DROP_EGRESS_DENIED;
		}
	}
	learned = egress_learned_of(pc, scope->scope_id);
	if (learned && learned->expires_ns > now && egress_learned_ports_ok(learned, ported, port)) {
		count(STAT_EGRESS_LEARNED_PASS);
		/* A learned address may be shared (a CDN): the name the client
		 * asks that server for must be one the scope allows too. */
		if (scope->verify_sni && pc->protocol == IPPROTO_TCP && port == EGRESS_TLS_PORT)
			return EGRESS_VERIFY_SNI;
		return EGRESS_PASS;
	}
	return scope->default_allow ? EGRESS_PASS : STAT_DROP_EGRESS_NOT_LEARNED;
}

#endif
