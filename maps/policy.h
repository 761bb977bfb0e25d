/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The classifier behind policies and stateless filters: a first packet costs
 * the same fixed number of lookups whether there are 10 rules or 10,000.
 *
 * Every field is cut into equivalence classes: two values are in one class
 * when exactly the same rules allow both (class 0 = no rule allows it). A
 * packet looks each field up once (scope hash, two LPM tries, two arrays),
 * then combines the class ids pairwise through precomputed cross-product
 * tables (the RFC / nf-hipac-without-bitsets idea):
 *
 *   T_SCOPE_APP  (scope class,  dport class) -> x
 *   T_SPORT      (x,            sport class) -> x'
 *   T_SRC_DST    (src class,    dst class)   -> y
 *   T_FINAL      (x',           y)           -> result id (0 = no rule)
 *
 * Compile time and table memory grow with the rules; the per-packet work is
 * five field lookups and, per group of rules in use (see below), four table
 * reads and one result read, whatever the number of rules.
 *
 * Groups: rules whose fields combine into more cross-product entries than a
 * generation holds (say 3,000 source-host rules and 3,000 destination-host
 * rules: every (source, destination) pair would be a class of its own) are
 * split by shape — which of source and destination are `any` — into up to
 * CLASSIFIER_GROUPS groups, each with its own classes and tables. Every field
 * lookup returns the classes of all groups at once (struct classifier_classes);
 * each group in use costs four more table reads and one result read, and the
 * packet's winner is the lowest rule index of the groups' results. The number
 * of groups depends on the rules' shapes, never on their count, and one group
 * is used whenever the rules fit in one.
 *
 * Sparse tables: a table whose product of class counts does not fit, but
 * whose non-empty combinations are few (10,000 rules each naming its own
 * source host and its own port: 10,001 x 10,001 cells, 10,000 of them
 * non-empty), is stored as a hash of its non-empty entries (pol_cross_sparse,
 * width 0 in its layout) instead of an array; a missing entry is 0. One hash
 * lookup instead of one array read: the cost per packet stays fixed.
 *
 * Every key carries a
 * generation (0 or 1): the compiler fills the inactive generation, then flips
 * runtime_config's policy_generation, so a new config applies atomically.
 */
#ifndef SLUICE_MAPS_POLICY_H
#define SLUICE_MAPS_POLICY_H

#include "abi.h"

#define POLICY_GENERATIONS 2
/* Policies, filter rules (all filters together), and both, per generation. */
#define POLICY_MAX_RULES 16384
#define FILTER_MAX_RULES 16384
#define CLASSIFIER_MAX_RULES (POLICY_MAX_RULES + FILTER_MAX_RULES)
/* Cross-product entries (u32) per generation: 32 MiB. */
#define CLASSIFIER_CROSS_PER_GEN (1u << 23)
#define CLASSIFIER_CROSS_ENTRIES (POLICY_GENERATIONS * CLASSIFIER_CROSS_PER_GEN)
/* Sparse tables (see below): non-empty entries per generation. */
#define CLASSIFIER_SPARSE_PER_GEN (1u << 20)
/* Distinct results (winning rule + rules it counts) per generation. */
#define CLASSIFIER_MAX_RESULTS 65536
/* Filter rules a packet can be counted by: `count` rules before the deciding one, and it. */
#define CLASSIFIER_MAX_COUNTED 6
#define CLASSIFIER_NO_RULE 0xffffffffu
/* Groups of rules classified through separate tables (see above). */
#define CLASSIFIER_GROUPS 4

/* The value of every field lookup (pol_scopes, the LPM tries, the port
 * arrays): the field's class in each group; 0 = no rule of that group. */
struct classifier_classes {
	__u32 group[CLASSIFIER_GROUPS];
};

/* Protocol slots of the port-class arrays. The "port" is the TCP/UDP port,
 * the ICMP/ICMPv6 message type, and for any other protocol its number. */
enum policy_proto_slot {
	POLICY_PROTO_TCP = 0,
	POLICY_PROTO_UDP = 1,
	POLICY_PROTO_ICMP = 2,
	POLICY_PROTO_ICMPV6 = 3,
	POLICY_PROTO_OTHER = 4,
	POLICY_PROTO_SLOTS = 5,
};
#define POLICY_PORTS 65536
/* pol_port_class / pol_sport_class index: generation * (SLOTS * 65536) + slot * 65536 + port */
#define POLICY_PORT_CLASS_ENTRIES (POLICY_GENERATIONS * POLICY_PROTO_SLOTS * POLICY_PORTS)

/* Who is classifying: the policy of a zone pair, or the filter of an interface. */
enum classifier_scope_kind {
	CLASSIFIER_SCOPE_POLICY = 0,   /* a = from zone, b = to zone */
	CLASSIFIER_SCOPE_FILTER = 1,   /* a = filter id (1-based), b = 0 */
};

struct classifier_scope_key {
	__u16 a;
	__u16 b;
	__u8 generation;
	__u8 kind;             /* enum classifier_scope_kind */
	__u8 pad[2];
};

/* (from zone, to zone, generation): source NAT rules are keyed by zone pair. */
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

enum classifier_table {
	CLASSIFIER_T_SCOPE_APP = 0,
	CLASSIFIER_T_SPORT = 1,
	CLASSIFIER_T_SRC_DST = 2,
	CLASSIFIER_T_FINAL = 3,
	CLASSIFIER_TABLES = 4,
};

/* Entry (left, right) of a table lives at pol_cross[base + left * width + right];
 * width 0: the table is sparse, its entries are in pol_cross_sparse. */
struct classifier_table_layout {
	__u32 base;
	__u32 width;           /* classes of the right-hand field, or 0 (sparse) */
};

/* pol_cross_sparse key: (left, right) of table `table` of group `group`. */
struct classifier_sparse_key {
	__u32 left;
	__u8 generation;
	__u8 group;
	__u8 table;            /* enum classifier_table */
	__u8 pad;
	__u32 right;
};

struct classifier_layout {
	__u32 groups;          /* groups in use, 0..CLASSIFIER_GROUPS */
	__u32 pad;
	struct classifier_table_layout table[CLASSIFIER_GROUPS][CLASSIFIER_TABLES];
};

enum policy_action {
	POLICY_ACTION_DENY = 0,
	POLICY_ACTION_PERMIT = 1,
	POLICY_ACTION_REJECT = 2,
	POLICY_ACTION_INSPECT = 3,
};

enum filter_action {
	FILTER_ACTION_ACCEPT = 0,   /* also: only `count` rules matched */
	FILTER_ACTION_DROP = 1,
};

/* pol_results index: generation * CLASSIFIER_MAX_RESULTS + result id (>= 1).
 * Result ids are shared by the groups of a generation. */
struct classifier_result {
	__u32 rule;            /* policy index, or filter rule slot; CLASSIFIER_NO_RULE if none decides */
	__u8 action;           /* enum policy_action, or enum filter_action */
	__u8 counted_n;        /* entries of counted[] in use */
	__u16 ruleset_id;      /* for POLICY_ACTION_INSPECT */
	__u32 counted[CLASSIFIER_MAX_COUNTED];  /* filter rule slots this packet counts for */
};

/* filter_hits index (per-CPU): generation * FILTER_MAX_RULES + filter rule slot. */
struct filter_rule_counter {
	__u64 packets;
	__u64 bytes;
};

#endif
