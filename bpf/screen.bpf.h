/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Screens (maps/screen.h) that decide whether a new session may open: per
 * source address, a rate of new sessions and a number of sessions held; per
 * destination address, a rate of new sessions. Checked when a session is
 * about to be created (for a flow the SYN proxy answers: when its cookie
 * comes back), so spoofed SYNs answered by cookies leave no state here.
 */
#ifndef SLUICE_BPF_SCREEN_H
#define SLUICE_BPF_SCREEN_H

#include "maps.bpf.h"
#include "fib.bpf.h"

#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC 1000000000ull

static __always_inline struct zone_screen *zone_screen_of(const struct runtime_config *cfg, __u16 zone)
{
	__u32 key = (cfg->policy_generation & 1) * SLUICE_MAX_ZONES + (zone % SLUICE_MAX_ZONES);

	return bpf_map_lookup_elem(&zone_screens, &key);
}

/* The zone's counters in the active generation (they start from zero with
 * each applied config, like the zone ids they are indexed by). */
static __always_inline struct screen_counter *screen_counter_of(const struct runtime_config *cfg, __u16 zone)
{
	__u32 key = (cfg->policy_generation & 1) * SLUICE_MAX_ZONES + (zone % SLUICE_MAX_ZONES);

	return bpf_map_lookup_elem(&screen_hits, &key);
}

static __always_inline void limit_key(struct address_limit_key *k, __u16 zone, __u8 family, const __be32 *addr)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->zone_id = zone;
	k->family = family;
	if (family == SLUICE_FAMILY_IPV4)
		k->addr[0] = addr[0];
	else
		__builtin_memcpy(k->addr, addr, 16);
}

/* Counts one new session in e's one-second window; 1 when that exceeds rate. */
static __always_inline int limit_window(struct address_limit *e, __u32 rate, __u64 now)
{
	if (now - e->window_start_ns >= NSEC_PER_SEC) {
		/* Racy between CPUs by design: the window is an estimate. */
		e->window_start_ns = now;
		e->window_count = 0;
	}
	return __sync_fetch_and_add(&e->window_count, 1) + 1 > rate;
}

/* The keys and the zero value live in the per-CPU packet context: the
 * first-packet program has no stack to spare. */
static __always_inline struct address_limit *source_limit(struct packet_ctx *pc, const struct address_limit_key *k)
{
	struct address_limit *e = bpf_map_lookup_elem(&src_limits, k);

	if (e)
		return e;
	/* A source seen anew (or pushed out of the LRU) starts clean. */
	__builtin_memset(&pc->limit_zero, 0, sizeof(pc->limit_zero));
	bpf_map_update_elem(&src_limits, k, &pc->limit_zero, BPF_NOEXIST);
	bpf_map_delete_elem(&src_released, k);
	return bpf_map_lookup_elem(&src_limits, k);
}

static __always_inline struct address_limit *destination_limit(struct packet_ctx *pc,
								 const struct address_limit_key *k)
{
	struct address_limit *e = bpf_map_lookup_elem(&dst_limits, k);

	if (e)
		return e;
	__builtin_memset(&pc->limit_zero, 0, sizeof(pc->limit_zero));
	bpf_map_update_elem(&dst_limits, k, &pc->limit_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&dst_limits, k);
}

/* May pc open a session? 0, or the drop reason. Sets pc->source_counted
 * when the session will count against its source's session limit. */
static __always_inline int screen_admit(const struct runtime_config *cfg, struct packet_ctx *pc, __u64 now)
{
	struct zone_screen *zs = zone_screen_of(cfg, pc->zone_in);
	struct address_limit_key *k = &pc->limit_key;
	struct screen_counter *sc;
	struct address_limit *e;

	pc->source_counted = 0;
	if (!zs || !(zs->source_sessions | zs->source_rate | zs->destination_rate))
		return 0;
	sc = screen_counter_of(cfg, pc->zone_in);
	if (zs->source_sessions || zs->source_rate) {
		limit_key(k, pc->zone_in, pc->family, src_addr_of(pc));
		e = source_limit(pc, k);
		if (e && zs->source_rate && limit_window(e, zs->source_rate, now)) {
			if (sc)
				sc->source_rate_drops += 1;
			return STAT_DROP_SCREEN_SOURCE_RATE;
		}
		if (e && zs->source_sessions) {
			__u64 *released = bpf_map_lookup_elem(&src_released, k);
			__s64 held = (__s64)(e->opened - e->closed - (released ? *released : 0));

			if (held >= (__s64)zs->source_sessions) {
				if (sc)
					sc->source_session_drops += 1;
				return STAT_DROP_SCREEN_SOURCE_SESSIONS;
			}
			pc->source_counted = 1;
		}
	}
	if (zs->destination_rate) {
		limit_key(k, pc->zone_in, pc->family, flow_dst_addr(pc));
		e = destination_limit(pc, k);
		if (e && limit_window(e, zs->destination_rate, now)) {
			if (sc)
				sc->destination_rate_drops += 1;
			return STAT_DROP_SCREEN_DEST_RATE;
		}
	}
	return 0;
}

/* The session pc opened counts against its source. */
static __always_inline void screen_session_opened(struct packet_ctx *pc)
{
	struct address_limit *e;

	if (!pc->source_counted)
		return;
	limit_key(&pc->limit_key, pc->zone_in, pc->family, src_addr_of(pc));
	e = bpf_map_lookup_elem(&src_limits, &pc->limit_key);
	if (e)
		__sync_fetch_and_add(&e->opened, 1);
}

/* The datapath itself retires a counted flow (a SYN reusing its tuple):
 * s is the initiator's entry, pc a packet of that initiator. */
static __always_inline void screen_session_closed(struct packet_ctx *pc, struct session_value *s)
{
	struct address_limit *e;

	if (!(s->flags & SESSION_F_SOURCE_COUNTED))
		return;
	s->flags &= ~SESSION_F_SOURCE_COUNTED;
	limit_key(&pc->limit_key, s->zone_in, pc->family, src_addr_of(pc));
	e = bpf_map_lookup_elem(&src_limits, &pc->limit_key);
	if (e)
		__sync_fetch_and_add(&e->closed, 1);
}

#endif
