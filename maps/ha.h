/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The HA pair (docs/ha.md). The controller's HA agent writes which groups
 * this node carries (ha_groups); the datapath drops a standby group's
 * transit traffic and, while session sync is on (runtime_config.ha_sync),
 * tells the agent about every flow it creates or moves to another TCP state
 * (ha_events), so the agent can send the flow to the peer.
 */
#ifndef SLUICE_MAPS_HA_H
#define SLUICE_MAPS_HA_H

#include "abi.h"

/* Redundancy groups; ids 1..HA_MAX_GROUPS (0: the interface is in none). */
#define HA_MAX_GROUPS 8

/* ha_groups: an array indexed by group id. A zeroed entry is standby: a
 * node forwards a group's traffic only after its agent has elected it. */
struct ha_group_state {
	__u8 active;           /* 1: this node carries the group */
	__u8 pad[3];
	__u32 epoch;           /* bumped by the agent on every change (for show) */
};

/* One ha_events ring buffer record: a flow changed. The agent reads the
 * flow's entries itself (so repeated events of one flow cost one message):
 * the key is any of the flow's two entries, family-neutral, IPv4 in word 0. */
struct ha_event {
	__be32 src_addr[4];
	__be32 dst_addr[4];
	__be16 src_port;
	__be16 dst_port;
	__u8 protocol;
	__u8 family;           /* SLUICE_FAMILY_IPV4 / _IPV6 */
	__u8 pad[2];
};

#define HA_EVENTS_BYTES (1 << 20)  /* ~21,000 events between two reads */

#endif
