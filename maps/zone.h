/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interface → zone bindings. Ingress frames are looked up by (ifindex of the
 * XDP interface, 802.1Q VLAN id or 0); the egress zone by (FIB egress ifindex, 0),
 * so a VLAN sub-interface is bound both ways by the compiler.
 */
#ifndef SLUICE_MAPS_ZONE_H
#define SLUICE_MAPS_ZONE_H

#include "abi.h"

struct zone_key {
	__u32 ifindex;
	__u16 vlan_id;         /* 0 = untagged */
	__u16 pad;
};

struct zone_value {
	__u16 zone_id;         /* 1..SLUICE_MAX_ZONES-1 */
	__u16 filter_id;       /* stateless filter on this ingress (1-based), 0 = none */
	__u8 ha_group;         /* redundancy group (maps/ha.h), 0 = none */
	__u8 pad[3];
};

#endif
