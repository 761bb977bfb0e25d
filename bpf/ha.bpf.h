/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath's part of the HA pair (docs/ha.md): a group this node does
 * not carry forwards nothing, and flow changes are reported to the agent.
 */
#ifndef SLUICE_BPF_HA_H
#define SLUICE_BPF_HA_H

#include "maps.bpf.h"

/* Whether this node carries the group; group 0 (no group) always. */
static __always_inline int ha_group_active(__u8 group)
{
	__u32 key = group;
	struct ha_group_state *g;

	if (!group)
		return 1;
	g = bpf_map_lookup_elem(&ha_groups, &key);
	return g && g->active;
}

/* Tells the agent that the flow with entry `key` was created or changed
 * TCP state. Reserved in the ring itself: no copy on the stack. A full ring
 * is counted; the agent's next bulk pass (the GC's sweep) catches up.
 * Inlined: xdp_policy_prog's stack is near the 512-byte limit, which a
 * call's frame would count against. */
static __always_inline int ha_note_flow(__u8 family, const union session_key *key)
{
	struct runtime_config *cfg = runtime_config();
	struct ha_event *e;

	if (!key)
		return 0;
	if (!cfg || !cfg->ha_sync)
		return 0;
	e = bpf_ringbuf_reserve(&ha_events, sizeof(*e), 0);
	if (!e) {
		count(STAT_HA_EVENT_LOST);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	if (family == SLUICE_FAMILY_IPV4) {
		e->src_addr[0] = key->v4.src_addr;
		e->dst_addr[0] = key->v4.dst_addr;
		e->src_port = key->v4.src_port;
		e->dst_port = key->v4.dst_port;
		e->protocol = key->v4.protocol;
	} else {
		__builtin_memcpy(e->src_addr, key->v6.src_addr, 16);
		__builtin_memcpy(e->dst_addr, key->v6.dst_addr, 16);
		e->src_port = key->v6.src_port;
		e->dst_port = key->v6.dst_port;
		e->protocol = key->v6.protocol;
	}
	e->family = family;
	bpf_ringbuf_submit(e, 0);
	count(STAT_HA_EVENT_SENT);
	return 0;
}

#endif
