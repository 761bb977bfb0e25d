/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address translation: what a session entry translates, the rule tables the
 * first packet of a flow is matched against, and the port reservations.
 *
 * A translated flow still has two session entries. The initiator's entry is
 * keyed by the original tuple and carries the translated tuple; the reply
 * entry is keyed by the reverse of the translated tuple and carries the
 * reverse of the original one. So every entry says "packets arriving with my
 * key leave with this tuple", and the other entry's key is always the reverse
 * of this entry's translated tuple.
 *
 * Rule tables are written by the controller per policy generation (the same
 * runtime_config.policy_generation byte flips them), so a config change is
 * atomic for new flows. Flows keep the translation they were created with.
 *
 * Evaluation on a flow's first packet (xdp_policy_prog):
 *   1. destination: nat_dst (exact: zone, protocol, port, address; then port
 *      0, then protocol 0) then the prefix maps nat_map_in_v4/v6 (static 1:1
 *      and NPTv6, destination inside an `outside` prefix). Route and policy
 *      see the translated destination.
 *   2. source, for flows a permit/inspect policy admitted: nat_map_out_v4/v6
 *      (source inside an `inside` prefix, flow leaving its zone), then the
 *      source rules (bitsets from nat_src_zones, nat_src_saddr_*,
 *      nat_src_daddr_* ANDed; lowest bit wins → nat_src_rules) translating to
 *      the egress interface's address (nat_ifaddrs) or to a pool (nat_pools),
 *      with a port reserved in nat_ports.
 */
#ifndef SLUICE_MAPS_NAT_H
#define SLUICE_MAPS_NAT_H

#include "abi.h"

/* ---- carried by a session entry ---- */

/* The tuple packets of this entry's direction leave with. Valid when flags has
 * SRC or DST; then every field is filled, changed or not (ports hold the ICMP
 * echo identifier the way session keys do). IPv4 addresses occupy word 0. */
struct session_nat {
	__be32 new_src_addr[4];
	__be32 new_dst_addr[4];
	__be16 new_src_port;
	__be16 new_dst_port;
	__u8 flags;            /* SESSION_NAT_* */
	__u8 pad[3];
};

enum session_nat_flags {
	SESSION_NAT_SRC = 1 << 0,        /* source address/port change */
	SESSION_NAT_DST = 1 << 1,        /* destination address/port change */
	/* On the initiator's entry: the flow holds the nat_ports reservation
	 * {new_src_addr, new_src_port, protocol}; whoever deletes the flow
	 * deletes the reservation too. */
	SESSION_NAT_PORT_HELD = 1 << 2,
};

/* ---- limits ---- */
#define NAT_GENERATIONS 2
#define NAT_MAX_SOURCE_RULES 64          /* one 64-bit word of rule bits */
#define NAT_MAX_POOLS 64
#define NAT_POOL_MAX_RANGES 8
#define NAT_POOL_SLOTS (NAT_MAX_POOLS * 2)   /* pool index * 2 + (family == IPv6) */
#ifndef NAT_MAX_PORT_RESERVATIONS
#define NAT_MAX_PORT_RESERVATIONS 262144
#endif
#define NAT_MAX_DESTINATION_RULES 4096
#define NAT_MAX_PREFIX_RULES 4096
#define NAT_PORT_PROBES 64               /* ports tried before a flow is refused */

/* ---- destination NAT (nat.destination): exact match ---- */
struct nat_dst_key {
	__be32 addr[4];        /* destination as received */
	__be16 port;           /* destination port; 0 = any port */
	__u16 zone_in;         /* the rule's `from` zone */
	__u8 protocol;         /* 0 = any protocol (then port is 0) */
	__u8 family;           /* SLUICE_FAMILY_* */
	__u8 generation;
	__u8 pad;
};

struct nat_dst_value {
	__be32 addr[4];        /* translated destination */
	__be16 port;           /* translated port; 0 = keep the port */
	__u16 pad;
	__u32 rule_id;         /* index in nat.destination */
};

/* ---- static 1:1 (nat.static) and NPTv6 (nat.nptv6): prefix maps ----
 * nat_map_in_*  : LPM on the destination, keyed by the `outside` prefix.
 * nat_map_out_* : LPM on the source, keyed by the `inside` prefix.
 * Keys are struct policy_lpm_key_v4/_v6 (prefixlen counts the generation
 * byte: 8 + prefix length). */
struct nat_prefix_value {
	__u8 from[16];         /* the matched prefix, host bits zero */
	__u8 to[16];           /* its replacement, host bits zero */
	__u8 prefix_len;       /* bits of `from` replaced by `to` */
	__u8 kind;             /* enum nat_prefix_kind */
	__u16 pad;
	__u32 rule_id;         /* index in nat.static / nat.nptv6 */
};

enum nat_prefix_kind {
	NAT_PREFIX_STATIC = 1, /* replace the prefix bits */
	NAT_PREFIX_NPTV6 = 2,  /* RFC 6296: replace, then fix one 16-bit word so
	                        * the address's one's-complement sum is unchanged */
};

/* ---- source NAT (nat.source) ---- */
struct nat_rule_bits {
	__u64 bits;            /* bit i = nat_src_rules[generation * 64 + i] */
};
/* nat_src_zones:   struct policy_zone_pair_key → struct nat_rule_bits
 * nat_src_saddr_v4/_v6, nat_src_daddr_v4/_v6: policy_lpm_key_* → nat_rule_bits
 * (a rule whose source/destination is `any` has its bit in the /0 entry; a
 * rule appears only in the families it can translate). */

struct nat_source_rule {
	__u32 rule_id;         /* index in nat.source */
	__u8 kind;             /* enum nat_source_kind */
	__u8 pad;
	__u16 pool_index;      /* NAT_SOURCE_POOL: index in nat.pools */
};

enum nat_source_kind {
	NAT_SOURCE_INTERFACE = 1,   /* the egress interface's address (nat_ifaddrs) */
	NAT_SOURCE_POOL = 2,
};

/* nat_pools: array of NAT_GENERATIONS * NAT_POOL_SLOTS, index
 * generation * NAT_POOL_SLOTS + pool_index * 2 + (family == IPv6). */
struct nat_pool_range {
	__be32 first[4];       /* first address; the range counts up in the last word */
	__u32 count;           /* addresses in the range */
};

struct nat_pool {
	struct nat_pool_range ranges[NAT_POOL_MAX_RANGES];
	__u32 address_count;   /* sum of the ranges' counts; 0 = slot unused */
	__u16 port_first;      /* host order, inclusive */
	__u16 port_last;
	__u8 family;
	__u8 flags;            /* NAT_POOL_* */
	__u16 pool_index;
};

enum nat_pool_flags {
	NAT_POOL_PERSISTENT = 1 << 0,   /* one source host always gets the same address */
};

/* nat_ifaddrs: ifindex → the address source NAT to that interface uses. Live
 * state, kept by the controller's netlink watcher; no generation. */
struct nat_ifaddr {
	__be32 v4;
	__be32 v6[4];
	__u8 has_v4;
	__u8 has_v6;
	__u16 port_first;      /* host order: ports handed out on this address */
	__u16 port_last;
	__u16 pad;
};

/* nat_ports: a translated (address, port) handed to one flow. Inserted with
 * BPF_NOEXIST, so no live mapping is handed out twice. */
struct nat_port_key {
	__be32 addr[4];
	__be16 port;           /* ICMP echo: the identifier */
	__u8 protocol;
	__u8 family;
};

struct nat_port_value {
	__be32 inside_addr[4]; /* the flow's original source */
	__be16 inside_port;
	__u16 pad;
	__u32 rule_id;         /* nat.source index */
	__u64 created_ns;
};

#endif
