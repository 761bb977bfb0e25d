/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Screens (maps/screen.h). Those that decide whether a new session may open:
 * per source address, a rate of new sessions and a number of sessions held;
 * per destination address, a rate of new sessions. Checked when a session is
 * about to be created (for a flow the SYN proxy answers: when its cookie
 * comes back), so spoofed SYNs answered by cookies leave no state here.
 * Packet floods (ICMP/UDP packets per second per source and destination) are
 * checked on every packet of those protocols from the zone; scans on every
 * packet that finds no session.
 */
#ifndef SLUICE_BPF_SCREEN_H
#define SLUICE_BPF_SCREEN_H

#include "maps.bpf.h"
#include "fib.bpf.h"
#include "host_inbound.bpf.h"
#include "hash.bpf.h"

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

/* Counts one event in a one-second window (start, count); 1 when that
 * exceeds rate. Racy between CPUs by design: the window is an estimate. */
static __always_inline int rate_window(__u64 *start, __u32 *count, __u32 rate, __u64 now)
{
	if (now - *start >= NSEC_PER_SEC) {
		*start = now;
		*count = 0;
	}
	return __sync_fetch_and_add(count, 1) + 1 > rate;
}

static __always_inline int limit_window(struct address_limit *e, __u32 rate, __u64 now)
{
	return rate_window(&e->window_start_ns, &e->window_count, rate, now);
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

/* One packet in a limited address's ICMP or UDP window: 0, or the drop
 * reason when it is over rate (counted for the zone as a source's or a
 * destination's drop). */
static __always_inline int packet_flood(struct screen_counter *sc, struct address_limit *e, int icmp,
					int destination, __u32 rate, __u64 now)
{
	if (!e)
		return 0;
	if (!(icmp ? rate_window(&e->icmp_window_start_ns, &e->icmp_window_count, rate, now)
		   : rate_window(&e->udp_window_start_ns, &e->udp_window_count, rate, now)))
		return 0;
	if (sc) {
		if (destination && icmp)
			sc->destination_icmp_drops += 1;
		else if (destination)
			sc->destination_udp_drops += 1;
		else if (icmp)
			sc->source_icmp_drops += 1;
		else
			sc->source_udp_drops += 1;
	}
	return icmp ? STAT_DROP_SCREEN_ICMP_FLOOD : STAT_DROP_SCREEN_UDP_FLOOD;
}

/* Packet floods: every ICMP/ICMPv6 or UDP packet from the zone counts
 * against its source's and its destination's per-second rate (addresses as
 * on the wire). 0, or the drop reason. */
static __always_inline int screen_packet_rate(const struct runtime_config *cfg, struct packet_ctx *pc, __u64 now)
{
	int icmp = pc->protocol == IPPROTO_ICMP || pc->protocol == IPPROTO_ICMPV6;
	struct address_limit_key *k = &pc->limit_key;
	struct screen_counter *sc;
	struct zone_screen *zs;
	__u32 src_rate, dst_rate;
	int rc;

	if (!icmp && pc->protocol != IPPROTO_UDP)
		return 0;
	zs = zone_screen_of(cfg, pc->zone_in);
	if (!zs)
		return 0;
	src_rate = icmp ? zs->source_icmp_rate : zs->source_udp_rate;
	dst_rate = icmp ? zs->destination_icmp_rate : zs->destination_udp_rate;
	if (!(src_rate | dst_rate))
		return 0;
	sc = screen_counter_of(cfg, pc->zone_in);
	if (src_rate) {
		limit_key(k, pc->zone_in, pc->family, src_addr_of(pc));
		rc = packet_flood(sc, source_limit(pc, k), icmp, 0, src_rate, now);
		if (rc)
			return rc;
	}
	if (dst_rate) {
		limit_key(k, pc->zone_in, pc->family, dst_addr_of(pc));
		return packet_flood(sc, destination_limit(pc, k), icmp, 1, dst_rate, now);
	}
	return 0;
}

/* One of 256 bits for a value (addresses vary in their high bytes as read
 * here: the mix brings every bit to the low byte). */
static __always_inline __u32 scan_bit(__u32 x)
{
	return hash_mix32(x) & (SCAN_SET_BITS - 1);
}

/* Sets bit in set; 1 when it was clear. */
static __always_inline int scan_set_add(__u64 *set, __u32 bit)
{
	__u64 mask = 1ull << (bit & 63);
	__u64 *word = &set[(bit >> 6) & 3];

	if (*word & mask)
		return 0;
	*word |= mask;
	return 1;
}

/* Scans: pc opens no session (it has none). Notes its destination port and
 * host in its source's window; a source that crosses the zone's threshold
 * is counted once per window and, with action block, has every packet that
 * opens no session dropped until the hold time ends (its established
 * sessions go on). 0, or the drop reason. Races between CPUs only blur the
 * estimate. */
static __always_inline int screen_scan(const struct runtime_config *cfg, struct packet_ctx *pc, __u64 now)
{
	struct zone_screen *zs = zone_screen_of(cfg, pc->zone_in);
	struct address_limit_key *k = &pc->limit_key;
	struct screen_counter *sc;
	struct scan_state *st;
	const __be32 *dst;
	__u32 host;
	int hit = 0;

	if (!zs || !(zs->scan_port_bits | zs->scan_host_bits))
		return 0;
	/* Answers to the firewall's own flows (a resolver's replies come to
	 * ever new ports) are no scan. */
	if (host_flow_lookup(pc->family, &pc->key))
		return 0;
	sc = screen_counter_of(cfg, pc->zone_in);
	limit_key(k, pc->zone_in, pc->family, src_addr_of(pc));
	st = bpf_map_lookup_elem(&scan_sources, k);
	if (!st) {
		__builtin_memset(&pc->scan_zero, 0, sizeof(pc->scan_zero));
		pc->scan_zero.window_start_ns = now;
		bpf_map_update_elem(&scan_sources, k, &pc->scan_zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&scan_sources, k);
		if (!st)
			return 0;
	}
	if (st->blocked_until_ns > now) {
		if (sc)
			sc->scan_drops += 1;
		return STAT_DROP_SCREEN_SCAN;
	}
	if (now - st->window_start_ns >= zs->scan_window_s * NSEC_PER_SEC) {
		__builtin_memset(st->port_set, 0, sizeof(st->port_set));
		__builtin_memset(st->host_set, 0, sizeof(st->host_set));
		st->ports = 0;
		st->hosts = 0;
		st->reported = 0;
		st->window_start_ns = now;
	}
	if (pc->protocol == IPPROTO_TCP || pc->protocol == IPPROTO_UDP)
		st->ports += scan_set_add(st->port_set, scan_bit(bpf_ntohs(dst_port_of(pc))));
	dst = dst_addr_of(pc);
	host = pc->family == SLUICE_FAMILY_IPV4 ? dst[0] : dst[0] ^ dst[1] ^ dst[2] ^ dst[3];
	st->hosts += scan_set_add(st->host_set, scan_bit(host));
	if (zs->scan_port_bits && st->ports >= zs->scan_port_bits)
		hit = 1;
	if (zs->scan_host_bits && st->hosts >= zs->scan_host_bits)
		hit = 1;
	if (!hit)
		return 0;
	if (!st->reported) {
		st->reported = 1;
		if (sc)
			sc->scans_detected += 1;
		count(STAT_SCREEN_SCAN_DETECTED);
	}
	if (!zs->scan_block)
		return 0;
	st->blocked_until_ns = now + (__u64)zs->scan_hold_s * NSEC_PER_SEC;
	if (sc)
		sc->scan_drops += 1;
	return STAT_DROP_SCREEN_SCAN;
}

#endif
