/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Policy classification without a rule scan (the nf-hipac / bit-vector idea):
 * every field is one lookup that returns the set of rules that field allows,
 * as a bitset over rules in config order; the sets are ANDed and the lowest
 * set bit is the winning rule. Every key carries a generation (0 or 1): the
 * compiler fills the inactive generation, then flips runtime_config's
 * policy_generation, so a new config applies atomically to new flows.
 */
#ifndef SLUICE_MAPS_POLICY_H
#define SLUICE_MAPS_POLICY_H

#include "abi.h"

#ifndef POLICY_MAX_RULES
#define POLICY_MAX_RULES 10240
#endif
#define POLICY_BITSET_WORDS (POLICY_MAX_RULES / 64)
#define POLICY_GENERATIONS 2

/* Protocol slots of the port-class array; ICMP "ports" are the message type. */
enum policy_proto_slot {
	POLICY_PROTO_TCP = 0,
	POLICY_PROTO_UDP = 1,
	POLICY_PROTO_ICMP = 2,
	POLICY_PROTO_ICMPV6 = 3,
	POLICY_PROTO_OTHER = 4,   /* any other protocol; port 0 */
	POLICY_PROTO_SLOTS = 5,
};
#define POLICY_PORTS 65536
/* policy_port_class index: generation * POLICY_PORT_CLASS_ENTRIES / 2 + slot * 65536 + port */
#define POLICY_PORT_CLASS_ENTRIES (POLICY_GENERATIONS * POLICY_PROTO_SLOTS * POLICY_PORTS)

struct policy_bitset {
	__u64 words[POLICY_BITSET_WORDS];
};

struct policy_zone_pair_key {
	__u16 from_zone;
	__u16 to_zone;
	__u8 generation;
	__u8 pad[3];
};

/* LPM keys: the generation is the first data byte, so prefixlen counts it (+8). */
struct policy_lpm_key_v4 {
	__u32 prefixlen;
	__u8 generation;
	__u8 addr[4];
	__u8 pad[3];
};

struct policy_lpm_key_v6 {
	__u32 prefixlen;
	__u8 generation;
	__u8 addr[16];
	__u8 pad[3];
};

/* Application classes: elementary (protocol slot, port interval)s → rule set. */
struct policy_app_key {
	__u32 app_class;
	__u8 generation;
	__u8 pad[3];
};

enum policy_action {
	POLICY_ACTION_DENY = 0,
	POLICY_ACTION_PERMIT = 1,
	POLICY_ACTION_REJECT = 2,
	POLICY_ACTION_INSPECT = 3,
};

/* policy_rules index: generation * POLICY_MAX_RULES + rule (bit) index. */
struct policy_rule {
	__u32 policy_id;       /* index of the policy in the config file */
	__u8 action;           /* enum policy_action */
	__u8 pad;
	__u16 ruleset_id;      /* for POLICY_ACTION_INSPECT */
};

#endif
