/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Fragment records (maps/frag.h): first fragments write, later ones follow. */
#ifndef SLUICE_BPF_FRAGMENT_H
#define SLUICE_BPF_FRAGMENT_H

#include "maps.bpf.h"

union frag_key {
	struct frag_key_v4 v4;
	struct frag_key_v6 v6;
};

static __always_inline void frag_key_of(const struct packet_ctx *pc, union frag_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	if (pc->family == SLUICE_FAMILY_IPV4) {
		k->v4.src_addr = pc->key.v4.src_addr;
		k->v4.dst_addr = pc->key.v4.dst_addr;
		k->v4.id = (__be16)pc->frag_id;
		k->v4.protocol = pc->protocol;
	} else {
		__builtin_memcpy(k->v6.src_addr, pc->key.v6.src_addr, 16);
		__builtin_memcpy(k->v6.dst_addr, pc->key.v6.dst_addr, 16);
		k->v6.id = pc->frag_id;
	}
}

/* Called for a first fragment once its verdict is known. */
static __always_inline void frag_record(const struct packet_ctx *pc, __u8 verdict, __u64 now)
{
	struct frag_value v = {};
	union frag_key k;
	int err;

	if (pc->frag != FRAG_FIRST)
		return;
	frag_key_of(pc, &k);
	v.last_seen_ns = now;
	v.range_end[0] = pc->frag_end;
	v.verdict = verdict;
	v.protocol = pc->protocol;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		v.src_port = pc->key.v4.src_port;
		v.dst_port = pc->key.v4.dst_port;
		err = bpf_map_update_elem(&frags_v4, &k.v4, &v, BPF_ANY);
	} else {
		v.src_port = pc->key.v6.src_port;
		v.dst_port = pc->key.v6.dst_port;
		err = bpf_map_update_elem(&frags_v6, &k.v6, &v, BPF_ANY);
	}
	count(err ? STAT_DROP_FRAG_TABLE_FULL : STAT_FRAG_RECORDED);
}

/* Adds a later fragment's [start, end) to the datagram's ranges. 0, or the
 * drop reason: it overlaps bytes already seen, or would open a fifth gap. */
static __always_inline int frag_cover(struct frag_value *v, __u16 start, __u16 end)
{
	int i, joined = -1, free = -1;

	if (end <= start)
		return STAT_DROP_FRAG_BAD;
	for (i = 0; i < FRAG_RANGES; i++) {
		if (!v->range_end[i]) {
			free = i;
			continue;
		}
		if (start < v->range_end[i] && end > v->range_start[i])
			return STAT_DROP_FRAG_OVERLAP;
	}
	/* Extend the range it continues, or that continues it. */
	for (i = 0; i < FRAG_RANGES; i++) {
		if (!v->range_end[i])
			continue;
		if (v->range_end[i] == start) {
			v->range_end[i] = end;
			joined = i;
			break;
		}
		if (v->range_start[i] == end) {
			v->range_start[i] = start;
			joined = i;
			break;
		}
	}
	if (joined < 0) {
		if (free < 0)
			return STAT_DROP_FRAG_DISORDERED;
		v->range_start[free & (FRAG_RANGES - 1)] = start;
		v->range_end[free & (FRAG_RANGES - 1)] = end;
		return 0;
	}
	/* A fragment that fills a gap joins the ranges on both its sides. */
	for (i = 0; i < FRAG_RANGES; i++) {
		if (i == joined || !v->range_end[i])
			continue;
		if (v->range_start[i] == v->range_end[joined & (FRAG_RANGES - 1)]) {
			v->range_end[joined & (FRAG_RANGES - 1)] = v->range_end[i];
			v->range_start[i] = 0;
			v->range_end[i] = 0;
		} else if (v->range_end[i] == v->range_start[joined & (FRAG_RANGES - 1)]) {
			v->range_start[joined & (FRAG_RANGES - 1)] = v->range_start[i];
			v->range_start[i] = 0;
			v->range_end[i] = 0;
		}
	}
	return 0;
}

/* For a later fragment: restores the flow's ports from the record. Returns 0
 * to go on as that flow, or the stat_reason to drop under. */
static __always_inline int frag_follow(struct packet_ctx *pc, __u64 now)
{
	struct frag_value *v;
	union frag_key k;
	int rc;

	frag_key_of(pc, &k);
	if (pc->family == SLUICE_FAMILY_IPV4)
		v = bpf_map_lookup_elem(&frags_v4, &k.v4);
	else
		v = bpf_map_lookup_elem(&frags_v6, &k.v6);
	if (!v)
		return STAT_DROP_FRAG_NO_RECORD;
	if (v->verdict == FRAG_VERDICT_DROP)
		return STAT_DROP_FRAG_DENIED;
	rc = frag_cover(v, pc->frag_start, pc->frag_end);
	if (rc)
		return rc;
	v->last_seen_ns = now;
	pc->protocol = v->protocol;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		pc->key.v4.src_port = v->src_port;
		pc->key.v4.dst_port = v->dst_port;
	} else {
		pc->key.v6.src_port = v->src_port;
		pc->key.v6.dst_port = v->dst_port;
		pc->key.v6.protocol = v->protocol;
	}
	count(STAT_FRAG_FOLLOWED);
	return 0;
}

#endif
