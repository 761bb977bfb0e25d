/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host-inbound (maps/host_inbound.h): the judgement of packets addressed to
 * the firewall itself, made in XDP by xdp_host_prog before the kernel sees
 * them, and the record of flows the firewall opened, kept by tc_egress_prog
 * so their replies are let in and nothing else is.
 */
#ifndef SLUICE_BPF_HOST_INBOUND_H
#define SLUICE_BPF_HOST_INBOUND_H

#include <linux/pkt_cls.h>
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "conntrack.bpf.h"
#include "fib.bpf.h"

/* What the link itself needs, never judged: NDP, MLD and router discovery
 * (the parser marks them), IGMP to a group. ARP is not IP and never gets
 * this far. */
static __always_inline int host_link_control(const struct packet_ctx *pc)
{
	return pc->link_local || (pc->protocol == IPPROTO_IGMP && dst_is_link_scope(pc));
}

/* What a service key names for a packet: the TCP/UDP destination port, the
 * ICMP/ICMPv6 type, nothing for other protocols. */
static __always_inline __u16 host_service_port(const struct packet_ctx *pc)
{
	__be16 dport = pc->family == SLUICE_FAMILY_IPV4 ? pc->key.v4.dst_port : pc->key.v6.dst_port;

	if (pc->protocol == IPPROTO_TCP || pc->protocol == IPPROTO_UDP)
		return bpf_ntohs(dport);
	if (pc->protocol == IPPROTO_ICMP || pc->protocol == IPPROTO_ICMPV6)
		return pc->icmp_type;
	return 0;
}

/* The service (zone_id 0: the catalog) names for (protocol, port), if any. */
static __always_inline int host_service_lookup(__u16 zone_id, __u8 protocol, __u16 port, __u8 generation,
					       __u32 *service)
{
	struct host_service_key k = {};
	struct host_service_value *v;

	k.zone_id = zone_id;
	k.protocol = protocol;
	k.port = port;
	k.generation = generation;
	v = bpf_map_lookup_elem(&host_services, &k);
	if (!v)
		return 0;
	*service = v->service;
	return 1;
}

/* `host-inbound: [all]` on the zone. */
static __always_inline int host_zone_allows_all(__u16 zone_id, __u8 generation)
{
	__u32 ignored;

	return host_service_lookup(zone_id, 0, 0, generation, &ignored);
}

static __always_inline __u64 host_flow_timeout(const struct runtime_config *cfg, __u8 protocol)
{
	switch (protocol) {
	case IPPROTO_TCP:
		return cfg->timeout_ns[TIMEOUT_TCP_ESTABLISHED];
	case IPPROTO_UDP:
		return cfg->timeout_ns[TIMEOUT_UDP];
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return cfg->timeout_ns[TIMEOUT_ICMP];
	default:
		return cfg->timeout_ns[TIMEOUT_OTHER];
	}
}

static __always_inline struct host_flow_value *host_flow_lookup(__u8 family, const union session_key *key)
{
	if (family == SLUICE_FAMILY_IPV4)
		return bpf_map_lookup_elem(&host_flows_v4, &key->v4);
	return bpf_map_lookup_elem(&host_flows_v6, &key->v6);
}

/* Does a packet carrying `key`, arriving from zone_in, answer a flow the
 * firewall opened towards that zone, one not idle past its protocol's
 * timeout? Refreshes the flow if so. */
static __always_inline int host_flow_answers(const struct runtime_config *cfg, __u8 family, __u8 protocol,
					     const union session_key *key, __u16 zone_in, __u64 now)
{
	struct host_flow_value *f = host_flow_lookup(family, key);

	if (!f || f->zone_id != zone_in)
		return 0;
	if (now > f->last_seen_ns && now - f->last_seen_ns > host_flow_timeout(cfg, protocol))
		return 0;
	if (f->last_seen_ns != now)
		f->last_seen_ns = now;
	return 1;
}

/* The quoted packet of an ICMP error for the firewall: one it sent. The
 * error is let in when that packet belongs to a flow the firewall opened,
 * or is its answer on a TCP/UDP service the zone allows. */
static __always_inline int host_icmp_error_allowed(const struct packet_ctx *pc, const struct runtime_config *cfg,
						   __u64 now)
{
	__u8 generation = cfg->policy_generation & 1;
	union session_key back;
	__u8 protocol;
	__be16 sport;
	__u32 ignored;

	reverse_tuple(pc->family, &pc->inner_key, &back);
	protocol = pc->family == SLUICE_FAMILY_IPV4 ? pc->inner_key.v4.protocol : pc->inner_key.v6.protocol;
	if (host_flow_answers(cfg, pc->family, protocol, &back, pc->zone_in, now))
		return 1;
	if (protocol != IPPROTO_TCP && protocol != IPPROTO_UDP)
		return 0;
	sport = pc->family == SLUICE_FAMILY_IPV4 ? pc->inner_key.v4.src_port : pc->inner_key.v6.src_port;
	return host_service_lookup(pc->zone_in, protocol, bpf_ntohs(sport), generation, &ignored) ||
	       host_zone_allows_all(pc->zone_in, generation);
}

/* Judges a packet for the firewall by its ingress zone. Returns 1 to let the
 * kernel have it, 0 to drop it; *service is the counter it goes under. */
static __always_inline int host_inbound_judge(const struct packet_ctx *pc, const struct runtime_config *cfg,
					      __u64 now, __u32 *service)
{
	__u8 generation = cfg->policy_generation & 1;
	__u16 port;

	/* Its first fragment was judged; frag_follow dropped it otherwise. */
	if (pc->frag == FRAG_LATER) {
		*service = HOST_SVC_FRAGMENT;
		return 1;
	}
	if (pc->icmp_error) {
		*service = HOST_SVC_ICMP_ERROR;
		return host_icmp_error_allowed(pc, cfg, now);
	}
	port = host_service_port(pc);
	if (host_service_lookup(pc->zone_in, pc->protocol, port, generation, service))
		return 1;
	if (host_flow_answers(cfg, pc->family, pc->protocol, &pc->key, pc->zone_in, now)) {
		*service = HOST_SVC_REPLY;
		return 1;
	}
	if (!host_service_lookup(0, pc->protocol, port, generation, service))
		*service = HOST_SVC_OTHER;
	return host_zone_allows_all(pc->zone_in, generation);
}

static __always_inline void host_count(const struct runtime_config *cfg, __u16 zone_id, __u32 service, int accepted)
{
	__u32 index = ((cfg->policy_generation & 1) * SLUICE_MAX_ZONES + (zone_id % SLUICE_MAX_ZONES)) *
			      HOST_MAX_SERVICES +
		      (service % HOST_MAX_SERVICES);
	struct host_inbound_counter *c = bpf_map_lookup_elem(&host_hits, &index);

	if (!c)
		return;
	if (accepted)
		c->accepted += 1;
	else
		c->dropped += 1;
}

/* Packets that start a flow the firewall may expect replies to. A TCP
 * segment other than a SYN only refreshes a flow already known, so a
 * connection the firewall accepted (its SYN-ACK) opens nothing; likewise a
 * UDP datagram from an unconnected socket (a server's answer: clients
 * connect their UDP sockets, as the resolver does), so a service removed
 * from host-inbound stops answering. */
static __always_inline int host_flow_opens(const struct packet_ctx *pc, const struct bpf_sock *sk)
{
	switch (pc->protocol) {
	case IPPROTO_TCP:
		return (pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN;
	case IPPROTO_UDP:
		return sk->dst_port != 0;
	case IPPROTO_ICMP:
		return pc->icmp_type == ICMP_ECHO;
	case IPPROTO_ICMPV6:
		return pc->icmp_type == ICMPV6_ECHO_REQUEST;
	default:
		return 1;
	}
}

/* tc_egress_prog, for a packet of no session: when the firewall itself sent
 * it (it has a socket; forwarded packets have none), remember the flow by
 * the tuple its replies will carry. */
static __always_inline void host_flow_note(struct __sk_buff *skb, const struct packet_ctx *pc)
{
	struct host_flow_value v = {}, *f;
	struct bpf_sock *sk = skb->sk;
	struct zone_key zk = {};
	struct zone_value *zone;
	union session_key back;
	__u64 now;

	if (!sk)
		return;
	reverse_key(pc, &back);
	now = bpf_ktime_get_coarse_ns();
	f = host_flow_lookup(pc->family, &back);
	if (f) {
		if (f->last_seen_ns != now)
			f->last_seen_ns = now;
		return;
	}
	if (!host_flow_opens(pc, sk))
		return;
	zk.ifindex = skb->ifindex;
	zone = bpf_map_lookup_elem(&zones, &zk);
	if (!zone)
		return;
	v.last_seen_ns = now;
	v.created_ns = now;
	v.zone_id = zone->zone_id;
	if (pc->family == SLUICE_FAMILY_IPV4)
		bpf_map_update_elem(&host_flows_v4, &back.v4, &v, BPF_ANY);
	else
		bpf_map_update_elem(&host_flows_v6, &back.v6, &v, BPF_ANY);
	count(STAT_HOST_FLOW_TRACKED);
}

#endif
