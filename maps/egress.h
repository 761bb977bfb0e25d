/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Egress by name (docs/egress.md). A scope governs the new flows of one zone
 * (optionally only some of its sources): their DNS (UDP and TCP port 53) is
 * steered to the controller's DNS proxy through the punt path, DNS over TLS
 * (port 853) is dropped, and any other new flow passes only to an address the
 * proxy learned for the scope from an allowed answer (not yet expired) or
 * that an address rule allows, on the rule's ports. The proxy writes a learned
 * address before it releases the answer that carries it.
 */
#ifndef SLUICE_MAPS_EGRESS_H
#define SLUICE_MAPS_EGRESS_H

#include "abi.h"

#ifndef SLUICE_EGRESS_LEARNED_ENTRIES
#define SLUICE_EGRESS_LEARNED_ENTRIES 65536   /* learned addresses per family, all scopes */
#endif
#ifndef SLUICE_EGRESS_PREFIX_ENTRIES
#define SLUICE_EGRESS_PREFIX_ENTRIES 16384    /* scope sources and address rules, per family */
#endif
#define SLUICE_EGRESS_PORT_RANGES 4           /* port ranges per learned address or address rule */

/* The ruleset id a steered DNS flow's session carries: BASE | its scope id.
 * The punt path hands such flows to the DNS proxy's listeners instead of
 * the inspection stage's, and the proxy reads the scope back from the
 * session. Above every inspection ruleset id (maps/punt.h SLUICE_MAX_RULESETS). */
#define SLUICE_EGRESS_DNS_RULESET_BASE 0xff00
#define SLUICE_EGRESS_DNS_RULESET_MASK 0xff00
/* verify-sni: a TLS flow (TCP 443) a learned address admitted is punted to
 * the inspection stage with this ruleset id (BASE | scope id), which reads
 * its ClientHello's SNI, resets it when the scope does not allow the name,
 * and otherwise hands it back to the fast path. */
#define SLUICE_EGRESS_SNI_RULESET_BASE 0xfe00
#define EGRESS_TLS_PORT 443

/* egress_sources_v4/v6 (LPM): (zone, source prefix) → the scope governing
 * it. A scope without sources has the zone's /0. prefixlen counts the zone's
 * 32 bits too. */
struct egress_source_key_v4 {
	__u32 prefixlen;
	__u32 zone;        /* network order, so the zone is the key's first 32 bits */
	__u32 addr;
};

struct egress_source_key_v6 {
	__u32 prefixlen;
	__u32 zone;
	__u32 addr[4];
};

struct egress_scope_ref {
	__u8 scope_id;     /* 1..255 */
	__u8 default_allow;/* no rule and nothing learned: 1 pass, 0 drop */
	__u8 verify_sni;   /* TCP 443 to a learned address goes through the stage's SNI check */
	__u8 pad;
};

struct egress_port_range {
	__u16 first;       /* host order, inclusive */
	__u16 last;
};

/* egress_learned_v4/v6 (hash): (scope, address) → until when new flows may
 * go there, and to which ports. */
struct egress_learned_key_v4 {
	__u32 scope;
	__u32 addr;
};

struct egress_learned_key_v6 {
	__u32 scope;
	__u32 addr[4];
};

struct egress_learned {
	__u64 expires_ns;  /* bpf_ktime_get_coarse_ns clock (CLOCK_MONOTONIC) */
	__u8 port_ranges;  /* 0: every port; else ports[0..port_ranges-1] */
	__u8 pad[3];
	struct egress_port_range ports[SLUICE_EGRESS_PORT_RANGES];
	__u32 pad2;
};

/* egress_prefixes_v4/v6 (LPM, same key layout as the sources with the scope
 * in place of the zone): the address rules. The entry of a prefix lists, in
 * rule order, every rule whose prefix contains it (the compiler resolves
 * first-match order over nested prefixes), each with its port range; the
 * first whose range holds the destination port decides. */
struct egress_prefix_entry {
	__u8 allow;        /* 1 allow, 0 deny */
	__u8 pad;
	struct egress_port_range ports;  /* 0-65535: every port (and port-less protocols) */
};

struct egress_prefix_rules {
	__u8 count;
	__u8 pad[3];
	struct egress_prefix_entry rules[SLUICE_EGRESS_PORT_RANGES];
};

/* The single entry of egress_cfg, written by the controller. */
struct egress_config {
	__u8 enabled;      /* a scope exists: new flows look up egress_sources */
	__u8 proxy_up;     /* the DNS proxy's listeners are open */
	__be16 dns_port;   /* its TCP and UDP listeners: 127.0.0.1 and ::1 */
	__u32 mark;        /* skb->mark that routes a steered packet locally */
};

#endif
