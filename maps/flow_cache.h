/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-CPU flow cache of policy verdicts for flows that got no session (deny,
 * reject). A flood of packets for a denied flow then costs one per-CPU lookup
 * instead of a classification. Entries are valid only for the config and FIB
 * generations they were made under.
 */
#ifndef SLUICE_MAPS_FLOW_CACHE_H
#define SLUICE_MAPS_FLOW_CACHE_H

#include "abi.h"

struct flow_cache_key {
	__u8 family;           /* SLUICE_FAMILY_IPV4 / _IPV6 */
	__u8 protocol;
	__u16 zone_in;
	__be16 src_port;
	__be16 dst_port;
	__be32 src_addr[4];
	__be32 dst_addr[4];
};

struct flow_cache_value {
	__u32 config_generation;
	__u32 fib_generation;
	__u32 policy_id;
	__u8 action;           /* enum policy_action */
	__u8 pad[3];
};

#endif
