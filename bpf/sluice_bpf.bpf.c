/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sluice datapath. One object, one skeleton (sluice_bpf.skel.h); programs
 * chain by tail calls through jump_table:
 *
 *   xdp_main_prog → xdp_zone_prog → [xdp_policy_prog] → [xdp_nat_prog] → xdp_forward_prog
 *                                 → [xdp_host_prog]   (packets for the firewall itself)
 *                                 → [xdp_synproxy_prog] (SYN cookies; proxied handshakes)
 *                                 → [xdp_splice_prog] (TCP handed back by the inspection stage)
 *   tc_egress_prog (packets the kernel forwarded: session + NAT; the firewall's own flows)
 *   tc_punt_prog   (TC ingress: punted packets to the inspection stage's sockets)
 *
 * Program names are part of the interface: perf shows bpf_prog_<tag>_<name>.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "conntrack.bpf.h"
#include "fragment.bpf.h"
#include "classify.bpf.h"
#include "fib.bpf.h"
#include "forward.bpf.h"
#include "reject.bpf.h"
#include "nat_plan.bpf.h"
#include "nat_rewrite.bpf.h"
#include "nat_tc.bpf.h"
#include "punt.bpf.h"
#include "tcp_splice.bpf.h"
#include "host_inbound.bpf.h"
#include "synproxy.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline struct packet_ctx *scratch(__u32 slot)
{
	return bpf_map_lookup_elem(&pkt_scratch, &slot);
}

static __always_inline int drop(enum stat_reason reason)
{
	count(reason);
	return XDP_DROP;
}

static __always_inline int pass(enum stat_reason reason)
{
	count(reason);
	return XDP_PASS;
}

/* A tail call that returns failed: the slot is empty. Fail closed. */
static __always_inline int jump(struct xdp_md *ctx, __u32 slot)
{
	bpf_tail_call(ctx, &jump_table, slot);
	return drop(STAT_DROP_INTERNAL);
}

SEC("xdp")
int xdp_main_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct packet_ctx *pc = scratch(0);
	int rc;

	if (!pc)
		return XDP_ABORTED;
	count(STAT_RX);
	rc = parse_packet(pc, data, data_end);
	if (rc == STAT_PASS_NON_IP)
		return pass(STAT_PASS_NON_IP);
	if (rc != PARSE_OK)
		return drop(rc);
	/* "Land": a packet from an address to itself is never on the wire. */
	if (pc->family == SLUICE_FAMILY_IPV4 ? pc->key.v4.src_addr == pc->key.v4.dst_addr
					     : ((pc->key.v6.src_addr[0] ^ pc->key.v6.dst_addr[0]) |
						(pc->key.v6.src_addr[1] ^ pc->key.v6.dst_addr[1]) |
						(pc->key.v6.src_addr[2] ^ pc->key.v6.dst_addr[2]) |
						(pc->key.v6.src_addr[3] ^ pc->key.v6.dst_addr[3])) == 0)
		return drop(STAT_DROP_LAND);
	return jump(ctx, SLUICE_JUMP_ZONE);
}

SEC("xdp")
int xdp_zone_prog(struct xdp_md *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	struct zone_key zk = {};
	struct zone_value *zone;
	struct session_value *s;
	__u64 now;
	int rc;

	if (!pc || !cfg)
		return XDP_ABORTED;
	zk.ifindex = ctx->ingress_ifindex;
	zk.vlan_id = pc->vlan_id;
	zone = bpf_map_lookup_elem(&zones, &zk);
	if (!zone)
		return pass(STAT_PASS_UNZONED);
	pc->zone_in = zone->zone_id;
	/* The interface's stateless filter sees every packet, before conntrack. */
	if (zone->filter_id) {
		void *data = (void *)(long)ctx->data;
		void *data_end = (void *)(long)ctx->data_end;

		if (run_filter(pc, cfg, zone->filter_id, (__u64)(data_end - data)) == FILTER_ACTION_DROP)
			return drop(STAT_DROP_FILTER);
	}
	if (host_link_control(pc))
		return pass(STAT_PASS_LINK_LOCAL);

	now = bpf_ktime_get_coarse_ns();
	if (pc->frag == FRAG_LATER) {
		rc = frag_follow(pc, now);
		if (rc)
			return drop(rc);
	}
	rc = screen_packet_rate(cfg, pc, now);
	if (rc)
		return drop(rc);
	/* Multicast, broadcast, IPv6 link-local: only the firewall takes them. */
	if (dst_is_link_scope(pc))
		return jump(ctx, SLUICE_JUMP_HOST);
	/* A group this node does not carry (HA standby): what is for the
	 * firewall itself is still judged by host-inbound; the rest is not
	 * forwarded (xdp_policy_prog tells them apart by the FIB). */
	if (!ha_group_active(zone->ha_group)) {
		pc->ha_standby = 1;
		return jump(ctx, SLUICE_JUMP_POLICY);
	}

	if (pc->icmp_error) {
		/* Related to a known flow: it travels the way the quoted packet's
		 * reverse does, so that direction's entry says how to translate it. */
		union session_key back;

		reverse_tuple(pc->family, &pc->inner_key, &back);
		s = session_lookup(pc->family, &back);
		if (s) {
			count(STAT_ICMP_RELATED);
			if (s->nat.flags & SESSION_NAT_ANY) {
				pc->nat = s->nat;
				return jump(ctx, SLUICE_JUMP_NAT);
			}
			return jump(ctx, SLUICE_JUMP_FORWARD);
		}
		return jump(ctx, SLUICE_JUMP_POLICY); /* local, or unrelated */
	}

	s = session_lookup(pc->family, &pc->key);
	if (!s) {
		rc = pc->frag == FRAG_LATER ? 0 : screen_scan(cfg, pc, now);
		if (rc)
			return drop(rc);
		return jump(ctx, SLUICE_JUMP_POLICY);
	}
	/* A flow the SYN proxy admitted, the server not yet answered: its
	 * SYN-ACK completes the handshake; anything from the client resends
	 * the SYN (a client RST just closes). */
	if ((s->punt_flags & SESSION_PUNT_SYNPROXY) && pc->protocol == IPPROTO_TCP && pc->frag == FRAG_NONE &&
	    ((s->flags & SESSION_F_REPLY) || !(pc->tcp_flags & TCP_FLAG_RST))) {
		pc->session_reply = s->flags & SESSION_F_REPLY;
		pc->synproxy_state = s->synproxy;
		if (s->nat.flags & SESSION_NAT_ANY)
			pc->nat = s->nat;
		session_fib_to_packet(pc, s, cfg);
		pc->synproxy = pc->session_reply ? SYNPROXY_SERVER_SYNACK : SYNPROXY_SEND_SYN;
		return jump(ctx, SLUICE_JUMP_SYNPROXY);
	}
	rc = TCP_TRACK_OK;
	if (pc->protocol == IPPROTO_TCP && pc->frag != FRAG_LATER) {
		rc = (s->punt_flags & SESSION_PUNT_INSPECT) ? punt_tcp_track(pc, s) : tcp_track(pc, s);
		/* A SYN reusing a closed tuple is a new flow, also after a verdict
		 * (the stage closes the session when it writes one). */
		if (rc == TCP_TRACK_NEW) {
			screen_session_closed(pc, s);
			session_retire_peer(pc, s);
			return jump(ctx, SLUICE_JUMP_POLICY);
		}
	}
	if (s->verdict != SESSION_VERDICT_PASS) {
		struct punt_ruleset_stats *st = punt_ruleset_stats(s->ruleset_id);

		if (st && s->ruleset_id)
			st->verdict_packets++;
		return drop(STAT_DROP_SESSION_VERDICT);
	}
	if (rc == TCP_TRACK_INVALID)
		return drop(STAT_DROP_TCP_INVALID);
	count(STAT_SESSION_HIT);
	session_account(s, pc, now);
	pc->session_reply = s->flags & SESSION_F_REPLY;
	session_fib_to_packet(pc, s, cfg);
	frag_record(pc, FRAG_VERDICT_FOLLOW, now);
	if (s->punt_flags & SESSION_PUNT_INSPECT) {
		if (pc->protocol == IPPROTO_TCP && pc->frag == FRAG_NONE)
			tcp_note_tsval(ctx, pc, s);
		rc = xdp_punt(ctx, pc, s, 0);
		if (rc != PUNT_CONTINUE)
			return rc;
	}
	if (s->nat.flags & SESSION_NAT_ANY)
		pc->nat = s->nat;
	if ((s->punt_flags & SESSION_PUNT_SPLICED) && pc->protocol == IPPROTO_TCP) {
		pc->splice = s->splice;
		return jump(ctx, SLUICE_JUMP_SPLICE);
	}
	if (pc->nat.flags & SESSION_NAT_ANY)
		return jump(ctx, SLUICE_JUMP_NAT);
	/* The fast path: the session's cached egress is current, nothing to
	 * translate: redirect from here, without the tail call to forward. */
	if (pc->fib_valid)
		return forward_packet(ctx, pc);
	return jump(ctx, SLUICE_JUMP_FORWARD);
}

/* A segment of a TCP connection the inspection stage handed back
 * (tcp_splice.bpf.h): renumbered for its receiver, then translated and
 * forwarded like any other. */
SEC("xdp")
int xdp_splice_prog(struct xdp_md *ctx)
{
	struct packet_ctx *pc = scratch(0);

	if (!pc)
		return XDP_ABORTED;
	if (pc->frag != FRAG_LATER && tcp_splice_rewrite(ctx, pc, &pc->splice))
		return drop(STAT_DROP_INTERNAL);
	count(STAT_TCP_SPLICED);
	if (pc->nat.flags & SESSION_NAT_ANY)
		return jump(ctx, SLUICE_JUMP_NAT);
	return jump(ctx, SLUICE_JUMP_FORWARD);
}

/* The SYN proxy completed a client's handshake, but its flow may not open:
 * xdp_synproxy_prog resets the client (a client left believing it is
 * connected would wait for its timeout), counted under `reason`. */
static __always_inline int synproxy_refuse(struct xdp_md *ctx, struct packet_ctx *pc, int reason)
{
	pc->synproxy = SYNPROXY_REFUSE;
	pc->synproxy_refusal = reason;
	return jump(ctx, SLUICE_JUMP_SYNPROXY);
}

/* The first packet of a flow (no session): route, classify, act. */
SEC("xdp")
int xdp_policy_prog(struct xdp_md *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	struct flow_cache_key fk;
	struct flow_cache_value *cached, fv = {};
	struct zone_key zk = {};
	struct zone_value *zone_out;
	struct classifier_result *rule;
	__u32 policy_id = SESSION_POLICY_RELATED;
	__u16 ruleset_id = 0;
	__u8 action;
	__u64 now;
	int rc;

	if (!pc || !cfg)
		return XDP_ABORTED;
	/* Destination NAT comes first: route and policy see the real target. */
	if (!pc->icmp_error) {
		rc = nat_plan_destination(pc, cfg);
		if (rc)
			return drop(rc);
	}
	rc = fib_resolve(ctx, pc, ctx->ingress_ifindex);
	/* For the firewall itself (with forwarding off, the lookup stops before
	 * it can tell: the kernel then delivers only what is its own). */
	if (rc == BPF_FIB_LKUP_RET_NOT_FWDED || rc == BPF_FIB_LKUP_RET_FWD_DISABLED)
		return jump(ctx, SLUICE_JUMP_HOST);
	if (pc->ha_standby)
		return drop(STAT_DROP_HA_STANDBY);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return pass(fib_pass_reason(rc));
	if (pc->ttl <= 1)
		return pass(STAT_PASS_TTL);
	if (pc->icmp_error)
		return drop(STAT_DROP_ICMP_UNRELATED);
	if (pc->protocol == IPPROTO_TCP && pc->frag != FRAG_LATER &&
	    (pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) != TCP_FLAG_SYN && pc->synproxy != SYNPROXY_ACK_VALID) {
		/* An ACK that may return one of the SYN proxy's cookies. */
		if ((pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_RST | TCP_FLAG_FIN)) == TCP_FLAG_ACK &&
		    pc->frag == FRAG_NONE && synproxy_configured(cfg, pc)) {
			pc->synproxy = SYNPROXY_CHECK_ACK;
			return jump(ctx, SLUICE_JUMP_SYNPROXY);
		}
		return drop(STAT_DROP_TCP_NO_SESSION);
	}

	zk.ifindex = pc->fib.ifindex;
	zone_out = bpf_map_lookup_elem(&zones, &zk);
	pc->zone_out = zone_out ? zone_out->zone_id : 0;
	/* A new flow towards a group this node does not carry. */
	if (zone_out && zone_out->ha_group && !ha_group_active(zone_out->ha_group))
		return drop(STAT_DROP_HA_STANDBY);
	now = bpf_ktime_get_coarse_ns();

	flow_cache_key_of(pc, &fk);
	cached = bpf_map_lookup_elem(&flow_cache, &fk);
	if (cached && cached->config_generation == cfg->config_generation &&
	    cached->fib_generation == cfg->fib_generation) {
		count(STAT_FLOW_CACHE_HIT);
		action = cached->action;
		policy_id = cached->policy_id;
	} else {
		rule = classify_policy(pc, cfg);
		if (rule) {
			action = rule->action;
			policy_id = rule->rule;
			ruleset_id = rule->ruleset_id;
		} else {
			action = cfg->default_action;
		}
	}
	pc->policy_id = policy_id;

	if (action == POLICY_ACTION_PERMIT || action == POLICY_ACTION_INSPECT) {
		__u8 punt = action == POLICY_ACTION_INSPECT ? SESSION_PUNT_INSPECT : 0;
		int err;

		if (pc->synproxy == SYNPROXY_ACK_VALID) {
			/* A cookie came back: the flow starts now, without
			 * inspection (the stage terminates TCP itself). */
			if (action != POLICY_ACTION_PERMIT)
				return synproxy_refuse(ctx, pc, STAT_DROP_TCP_NO_SESSION);
			punt = SESSION_PUNT_SYNPROXY;
		} else if (action == POLICY_ACTION_PERMIT && pc->protocol == IPPROTO_TCP && pc->frag == FRAG_NONE &&
			   synproxy_wanted(cfg, pc, now)) {
			/* Answered with a cookie: nothing is stored, no port taken. */
			pc->synproxy = SYNPROXY_ANSWER_SYN;
			return jump(ctx, SLUICE_JUMP_SYNPROXY);
		}
		err = screen_admit(cfg, pc, now);
		if (!err)
			err = nat_plan_source(pc, cfg, now);
		if (!err)
			err = session_create(pc, cfg, policy_id, ruleset_id, punt, now);
		if (err)
			return pc->synproxy == SYNPROXY_ACK_VALID ? synproxy_refuse(ctx, pc, err) : drop(err);
		screen_session_opened(pc);
		count(STAT_SESSION_CREATED);
		frag_record(pc, FRAG_VERDICT_FOLLOW, now);
		if (punt & SESSION_PUNT_SYNPROXY) {
			pc->synproxy = SYNPROXY_SEND_SYN;
			return jump(ctx, SLUICE_JUMP_SYNPROXY);
		}
		if (action == POLICY_ACTION_INSPECT) {
			struct session_value *s = session_lookup(pc->family, &pc->key);

			if (!s)
				return drop(STAT_DROP_INTERNAL);
			rc = xdp_punt(ctx, pc, s, 1);
			if (rc != PUNT_CONTINUE)
				return rc;
		}
		if (pc->nat.flags & SESSION_NAT_ANY)
			return jump(ctx, SLUICE_JUMP_NAT); /* it handles NO_NEIGH too */
		if (rc == BPF_FIB_LKUP_RET_NO_NEIGH)
			return pass(STAT_PASS_NO_NEIGH);
		return jump(ctx, SLUICE_JUMP_FORWARD);
	}

	/* A client the proxy answered, now denied (the policy changed since
	 * its SYN): it believes it is connected, so it is told otherwise. */
	if (pc->synproxy == SYNPROXY_ACK_VALID)
		return synproxy_refuse(ctx, pc, policy_id == SESSION_POLICY_RELATED ? STAT_DROP_POLICY_DEFAULT
											   : STAT_DROP_POLICY_DENY);
	/* No session: remember the verdict for the flow's next packets. */
	if (!cached || cached->config_generation != cfg->config_generation ||
	    cached->fib_generation != cfg->fib_generation) {
		fv.config_generation = cfg->config_generation;
		fv.fib_generation = cfg->fib_generation;
		fv.policy_id = policy_id;
		fv.action = action;
		bpf_map_update_elem(&flow_cache, &fk, &fv, BPF_ANY);
	}
	frag_record(pc, FRAG_VERDICT_DROP, now);
	if (action == POLICY_ACTION_REJECT) {
		count(STAT_DROP_POLICY_REJECT);
		if (pc->frag == FRAG_LATER)
			return XDP_DROP;
		if (pc->protocol == IPPROTO_TCP) {
			if (reject_tcp(ctx, pc))
				return drop(STAT_DROP_INTERNAL);
			count(STAT_REJECT_TCP_RST);
		} else {
			if (reject_icmp(ctx, pc))
				return drop(STAT_DROP_INTERNAL);
			count(STAT_REJECT_ICMP);
		}
		return XDP_TX;
	}
	return drop(policy_id == SESSION_POLICY_RELATED ? STAT_DROP_POLICY_DEFAULT : STAT_DROP_POLICY_DENY);
}

/* A packet for the firewall itself: one of its addresses, or link scope.
 * Judged by the zone it came from (host_inbound.bpf.h); what is let in goes
 * to the kernel, the rest is dropped here. */
SEC("xdp")
int xdp_host_prog(struct xdp_md *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	__u32 service = HOST_SVC_OTHER;
	int accepted;
	__u64 now;

	if (!pc || !cfg)
		return XDP_ABORTED;
	now = bpf_ktime_get_coarse_ns();
	accepted = host_inbound_judge(pc, cfg, now, &service);
	host_count(cfg, pc->zone_in, service, accepted);
	frag_record(pc, accepted ? FRAG_VERDICT_FOLLOW : FRAG_VERDICT_DROP, now);
	if (!accepted)
		return drop(STAT_DROP_HOST_INBOUND);
	return pass(dst_is_link_scope(pc) ? STAT_PASS_LINK_LOCAL : STAT_PASS_LOCAL);
}

/* The SYN proxy (synproxy.bpf.h), one stage per call: pc->synproxy says
 * which. */
SEC("xdp")
int xdp_synproxy_prog(struct xdp_md *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	struct screen_counter *sc;
	struct zone_screen *zs;
	int rc;

	if (!pc || !cfg)
		return XDP_ABORTED;
	zs = zone_screen_of(cfg, pc->zone_in);
	sc = screen_counter_of(cfg, pc->zone_in);
	switch (pc->synproxy) {
	case SYNPROXY_ANSWER_SYN:
		if (!zs || synproxy_answer_syn(ctx, pc, zs))
			return drop(STAT_DROP_INTERNAL);
		if (sc)
			sc->syn_proxy_cookies_sent += 1;
		count(STAT_SYNPROXY_COOKIE_SENT);
		return XDP_TX;
	case SYNPROXY_CHECK_ACK:
		if (!zs || synproxy_check_ack(ctx, pc, zs)) {
			if (sc)
				sc->syn_proxy_cookies_invalid += 1;
			return drop(STAT_DROP_SYNPROXY_BAD_COOKIE);
		}
		if (sc)
			sc->syn_proxy_cookies_valid += 1;
		count(STAT_SYNPROXY_COOKIE_VALID);
		pc->synproxy = SYNPROXY_ACK_VALID;
		return jump(ctx, SLUICE_JUMP_POLICY);
	case SYNPROXY_SEND_SYN:
		if (synproxy_send_syn(ctx, pc))
			return drop(STAT_DROP_INTERNAL);
		if (sc)
			sc->syn_proxy_server_syns += 1;
		count(STAT_SYNPROXY_SERVER_SYN);
		if (pc->nat.flags & SESSION_NAT_ANY)
			return jump(ctx, SLUICE_JUMP_NAT);
		return jump(ctx, SLUICE_JUMP_FORWARD);
	case SYNPROXY_SERVER_SYNACK:
		if (pc->tcp_flags & TCP_FLAG_RST) {
			/* The server refused: the client hears it in the
			 * numbering it knows, and the flow closes. */
			struct session_value *s = session_lookup(pc->family, &pc->key);

			if (s)
				tcp_set_state(pc, s, TCP_SESSION_CLOSED, 0);
			__builtin_memset(&pc->splice, 0, sizeof(pc->splice));
			pc->splice.seq_delta = pc->synproxy_state.proxy_isn + 1 - pc->tcp_seq;
			return jump(ctx, SLUICE_JUMP_SPLICE);
		}
		if ((pc->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_FIN)) != (TCP_FLAG_SYN | TCP_FLAG_ACK) ||
		    pc->tcp_ack != pc->synproxy_state.client_isn + 1)
			return drop(STAT_DROP_SYNPROXY_SYNACK);
		rc = synproxy_server_synack(ctx, pc);
		if (rc < 0)
			return drop(STAT_DROP_INTERNAL);
		return rc;
	case SYNPROXY_REFUSE:
		count(pc->synproxy_refusal);
		if (sc)
			sc->syn_proxy_refused += 1;
		if (reject_tcp(ctx, pc))
			return drop(STAT_DROP_INTERNAL);
		count(STAT_REJECT_TCP_RST);
		return XDP_TX;
	default:
		return drop(STAT_DROP_INTERNAL);
	}
}

/* Packets of translated flows (pc->nat). Handing a packet to the kernel
 * instead of redirecting it: destination translation happens here (the kernel
 * must route the real target), source translation is left to tc_egress_prog
 * when it is all there is (the kernel must see, and answer ICMP to, the real
 * source); a flow translated both ways is handed over fully translated. */
SEC("xdp")
int xdp_nat_prog(struct xdp_md *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	int rc, reason = 0;

	if (!pc || !cfg)
		return XDP_ABORTED;
	if (pc->icmp_error) {
		if (nat_rewrite_icmp_error((void *)(long)ctx->data, (void *)(long)ctx->data_end, pc))
			return drop(STAT_DROP_INTERNAL);
		count(STAT_NAT_ICMP_ERROR);
		return jump(ctx, SLUICE_JUMP_FORWARD);
	}
	rc = fib_ensure(ctx, pc, cfg);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		reason = fib_pass_reason(rc);
	else
		reason = forward_pass_reason(pc);
	if (reason && (pc->nat.flags & SESSION_NAT_ANY) == SESSION_NAT_SRC) {
		count(STAT_NAT_DEFERRED_TC);
		return pass(reason);
	}
	if (nat_rewrite(ctx, pc))
		return drop(STAT_DROP_INTERNAL);
	count(STAT_NAT_TRANSLATED);
	if (reason)
		return pass(reason);
	pc->forward_checked = 1;
	return jump(ctx, SLUICE_JUMP_FORWARD);
}

SEC("xdp")
int xdp_forward_prog(struct xdp_md *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	int rc;

	if (!pc || !cfg)
		return XDP_ABORTED;
	rc = fib_ensure(ctx, pc, cfg);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return pass(fib_pass_reason(rc));
	return forward_packet(ctx, pc);
}

/* Packets the kernel forwards (the fast path passed them, e.g. while the
 * neighbour was unresolved): the session learns the egress the kernel chose,
 * so the flow's next packets take the XDP path. */
SEC("tc")
int tc_egress_prog(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct packet_ctx *pc = scratch(1);
	struct runtime_config *cfg = runtime_config();
	struct session_value *s;
	struct ethhdr *eth = data;
	__u32 mtu = 0;

	if (!pc || !cfg)
		return TC_ACT_OK;
	if (parse_packet(pc, data, data_end) != PARSE_OK || pc->frag == FRAG_LATER)
		return TC_ACT_OK;
	if ((void *)(eth + 1) > data_end)
		return TC_ACT_OK;
	if (pc->icmp_error)
		return nat_tc_icmp_error(skb, pc);
	s = session_lookup(pc->family, &pc->key);
	if (!s) {
		host_flow_note(skb, pc);
		return TC_ACT_OK;
	}
	count(STAT_TC_EGRESS_SESSION);
	s->last_seen_ns = bpf_ktime_get_coarse_ns();
	if (s->fib.generation != cfg->fib_generation && pc->l3_off == sizeof(*eth) &&
	    bpf_check_mtu(skb, skb->ifindex, &mtu, 0, 0) == BPF_MTU_CHK_RET_SUCCESS) {
		s->fib.ifindex = skb->ifindex;
		__builtin_memcpy(s->fib.dst_mac, eth->h_dest, 6);
		__builtin_memcpy(s->fib.src_mac, eth->h_source, 6);
		__u32 out = skb->ifindex;

		s->fib.mtu = mtu;
		s->fib.flags = bpf_map_lookup_elem(&tx_ports, &out) ? SESSION_FIB_XMIT : 0;
		s->fib.generation = cfg->fib_generation;
	}
	/* A packet XDP handed over untranslated (maps/nat.h, xdp_nat_prog). */
	if (s->nat.flags & SESSION_NAT_ANY) {
		pc->nat = s->nat;
		if (nat_rewrite_skb(skb, pc)) {
			count(STAT_DROP_INTERNAL);
			return TC_ACT_SHOT;
		}
		count(STAT_TC_EGRESS_NAT);
	}
	return TC_ACT_OK;
}

/* TC ingress: a packet XDP punted (punt_meta in front) is assigned to the
 * inspection stage's socket and marked for the local policy route. A punted
 * packet the stage has no socket for is dropped, or with the stage down and
 * its ruleset failing open, left to the kernel (the session is released). */
SEC("tc")
int tc_punt_prog(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct punt_meta *meta = (void *)(long)skb->data_meta;
	struct packet_ctx *pc = scratch(2);
	struct punt_config *cfg = punt_config();
	struct punt_ruleset_stats *st;
	struct bpf_sock *sk = 0;
	int reply, err;

	/* The end of a handshake the SYN proxy held (synproxy.bpf.h). */
	if ((void *)(long)skb->data_meta + sizeof(__u16) <= data &&
	    *(__u16 *)(long)skb->data_meta == SYNPROXY_META_MAGIC)
		return pc ? tc_synproxy_complete(skb, pc) : TC_ACT_SHOT;
	if ((void *)(meta + 1) > data || meta->magic != PUNT_META_MAGIC)
		return TC_ACT_OK;
	reply = meta->reply;
	st = punt_ruleset_stats(meta->ruleset_id);
	if (!pc || !cfg)
		return TC_ACT_SHOT;
	if (parse_packet(pc, data, data_end) != PARSE_OK)
		return TC_ACT_SHOT;
	/* Later fragments carry no ports: the kernel reassembles locally. */
	if (pc->frag != FRAG_LATER) {
		if (pc->protocol == IPPROTO_TCP)
			sk = punt_tcp_socket(skb, pc, cfg, reply);
		else if (pc->protocol == IPPROTO_UDP)
			sk = punt_udp_socket(skb, pc, cfg, reply);
		if (!sk && !reply && punt_opens_flow(pc) && punt_fails_open(meta->ruleset_id)) {
			/* No listener: the stage died without saying so. */
			struct session_value *s = session_lookup(pc->family, &pc->key);

			if (s)
				punt_release(pc, s);
			if (st)
				st->fail_open_packets++;
			count(STAT_INSPECT_FAIL_OPEN);
			return TC_ACT_OK;
		}
		if (!sk) {
			if (st)
				st->no_socket_packets++;
			count(STAT_DROP_PUNT_NO_SOCKET);
			return TC_ACT_SHOT;
		}
		err = bpf_sk_assign(skb, sk, 0);
		bpf_sk_release(sk);
		if (err) {
			count(STAT_DROP_INTERNAL);
			return TC_ACT_SHOT;
		}
	}
	skb->mark = cfg->mark;
	count(STAT_PUNT_ASSIGNED);
	return TC_ACT_OK;
}
