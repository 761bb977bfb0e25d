/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host-inbound: what the firewall itself answers, per ingress zone (config
 * `host-inbound`, docs/host-protection.md). Every packet addressed to one of
 * the firewall's addresses, or to a link-scope address (multicast, broadcast,
 * IPv6 link-local), is judged by the zone it arrived from, whichever of the
 * firewall's addresses it is for:
 *
 *   accepted  it names a service the zone allows (host_services, keyed by the
 *             zone), or it answers, from the zone it went to, a flow the
 *             firewall opened itself (host_flows_v4/v6, written by
 *             tc_egress_prog), or it is an ICMP
 *             error about such a flow or an allowed service;
 *   dropped   everything else, counted under the service it named.
 *
 * ARP, IPv6 neighbour/router discovery and MLD never reach this judgement
 * (the link needs them); IGMP to a multicast group neither.
 */
#ifndef SLUICE_MAPS_HOST_INBOUND_H
#define SLUICE_MAPS_HOST_INBOUND_H

#include "abi.h"

/* Service ids, per generation. The first few are built in; the compiler
 * numbers the named services (ping, ssh, ...) and then the config's own
 * { protocol, port } entries after them. */
#define HOST_MAX_SERVICES 64
enum host_service_builtin {
	HOST_SVC_OTHER = 0,       /* a packet no known service names */
	HOST_SVC_REPLY = 1,       /* a reply to a flow the firewall opened */
	HOST_SVC_ICMP_ERROR = 2,  /* an ICMP error about an allowed flow */
	HOST_SVC_FRAGMENT = 3,    /* a later fragment of an accepted datagram */
	HOST_SVC_FIRST_NAMED = 4,
};

/* host_services key. zone_id 0 is the catalog: which service a packet names,
 * whatever the zone (to count drops by name). A zone's own entries are the
 * services it allows; (zone, protocol 0, port 0) means every service (`all`).
 * port: TCP/UDP destination port, ICMP/ICMPv6 type, 0 for other protocols;
 * host byte order. */
struct host_service_key {
	__u16 zone_id;
	__u16 port;
	__u8 protocol;
	__u8 generation;       /* policy generation (runtime_config) */
	__u8 pad[2];
};

struct host_service_value {
	__u32 service;         /* < HOST_MAX_SERVICES */
};

/* A flow the firewall opened, keyed by the tuple its replies carry (the
 * reverse of what it sent): session_key_v4/v6 as they appear on the wire. */
struct host_flow_value {
	__u64 last_seen_ns;    /* coarse clock; either direction */
	__u64 created_ns;
	__u16 zone_id;         /* the zone it left to: its replies arrive from there */
	__u8 pad[6];
};

/* host_hits: per CPU, index (generation * SLUICE_MAX_ZONES + zone) *
 * HOST_MAX_SERVICES + service. Zeroed for a generation when a config is
 * applied to it. */
struct host_inbound_counter {
	__u64 accepted;        /* packets */
	__u64 dropped;         /* packets */
};

#define HOST_HITS_ENTRIES (2 * SLUICE_MAX_ZONES * HOST_MAX_SERVICES)

#ifndef SLUICE_MAX_HOST_FLOWS
#define SLUICE_MAX_HOST_FLOWS 16384    /* flows the firewall opened, per family (LRU) */
#endif
#define HOST_SERVICE_ENTRIES 16384     /* host_services, both generations */

#endif
