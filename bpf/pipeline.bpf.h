/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pipeline, one body for both hooks (hook.bpf.h): built for XDP by
 * sluice_bpf.bpf.c (xdp_*_prog) and for TC ingress by sluice_tc.bpf.c
 * (tc_*_prog). Programs chain by tail calls through jump_table:
 *
 *   main → zone → [policy] → [nat] → forward
 *               → [host]     (packets for the firewall itself)
 *               → [synproxy] (SYN cookies; proxied handshakes)
 *               → [splice]   (TCP handed back by the inspection stage)
 *
 * Program names are part of the interface: perf shows bpf_prog_<tag>_<name>.
 */
#ifndef SLUICE_BPF_PIPELINE_H
#define SLUICE_BPF_PIPELINE_H

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "hook.bpf.h"
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
#include "punt.bpf.h"
#include "tcp_splice.bpf.h"
#include "host_inbound.bpf.h"
#include "synproxy.bpf.h"
#include "egress.bpf.h"

static __always_inline struct packet_ctx *scratch(__u32 slot)
{
	return bpf_map_lookup_elem(&pkt_scratch, &slot);
}

/* The length of the packet the pipeline is working on (0 before the
 * parser got to its IP header). */
static __always_inline __u32 current_l3_len(void)
{
	struct packet_ctx *pc = scratch(0);

	return pc ? pc->l3_len : 0;
}

/* A packet's fate, counted, and captured while `sluice capture` asks
 * (maps/observe.h). Every program names its context ctx, so drop(reason)
 * and pass(reason) read as before. */
static __always_inline int drop_packet(hook_ctx *ctx, enum stat_reason reason)
{
	count_bytes(reason, current_l3_len());
	capture_packet(ctx, reason, 1);
	return HOOK_DROP;
}

static __always_inline int pass_packet(hook_ctx *ctx, enum stat_reason reason)
{
	count_bytes(reason, current_l3_len());
	capture_packet(ctx, reason, 0);
	return HOOK_PASS;
}

#define drop(reason) drop_packet(ctx, reason)
#define pass(reason) pass_packet(ctx, reason)

/* A tail call that returns failed: the slot is empty. Fail closed. */
static __always_inline int jump(hook_ctx *ctx, __u32 slot)
{
	bpf_tail_call(ctx, &jump_table, slot);
	return drop(STAT_DROP_INTERNAL);
}

HOOK_SEC
int HOOK_PROG(main)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);
	int rc;

	if (!pc)
		return HOOK_ABORTED;
	count(STAT_RX);
	rc = hook_parse(ctx, pc);
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

HOOK_SEC
int HOOK_PROG(zone)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	struct zone_key zk = {};
	struct zone_value *zone;
	struct session_value *s;
	__u64 now;
	int rc;

	if (!pc || !cfg)
		return HOOK_ABORTED;
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
			session_retire_peer(cfg, pc, s, ctx->ingress_ifindex, now);
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
HOOK_SEC
int HOOK_PROG(splice)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);

	if (!pc)
		return HOOK_ABORTED;
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
static __always_inline int synproxy_refuse(hook_ctx *ctx, struct packet_ctx *pc, int reason)
{
	pc->synproxy = SYNPROXY_REFUSE;
	pc->synproxy_refusal = reason;
	return jump(ctx, SLUICE_JUMP_SYNPROXY);
}

/* The first packet of a flow (no session): route, classify, act. */
HOOK_SEC
int HOOK_PROG(policy)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	struct flow_cache_key fk;
	struct flow_cache_value *cached, fv = {};
	struct zone_key zk = {};
	struct zone_value *zone_out;
	struct classifier_result *rule;
	struct egress_config *egress;
	struct egress_scope_ref *scope;
	__u32 policy_id = SESSION_POLICY_RELATED;
	__u16 ruleset_id = 0;
	__u32 log;
	__u8 action;
	__u64 now;
	int rc;

	if (!pc || !cfg)
		return HOOK_ABORTED;
	/* Destination NAT comes first: route and policy see the real target. */
	if (!pc->icmp_error) {
		rc = nat_plan_destination(pc, cfg);
		if (rc)
			return drop(rc);
	}
	rc = fib_resolve(ctx, pc, ctx->ingress_ifindex, hook_l3_wire_len(ctx, pc));
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
	policy_account(cfg, pc, policy_id);
	log = policy_log_flags(cfg, policy_id);

	/* Egress by name: a governed source's DNS goes to the proxy whatever
	 * the policy says of its resolver (the query never reaches it); its
	 * other new flows need a learned or allowed destination. */
	egress = egress_config();
	if (egress && egress->enabled && (scope = egress_scope_of(pc))) {
		int verdict = egress_judge(pc, scope, now);

		if (verdict == EGRESS_STEER_DNS) {
			action = POLICY_ACTION_INSPECT;
			ruleset_id = SLUICE_EGRESS_DNS_RULESET_BASE | scope->scope_id;
			count(STAT_EGRESS_DNS_STEERED);
		} else if (verdict == EGRESS_VERIFY_SNI) {
			if (action == POLICY_ACTION_PERMIT) {
				action = POLICY_ACTION_INSPECT;
				ruleset_id = SLUICE_EGRESS_SNI_RULESET_BASE | scope->scope_id;
			}
		} else if (verdict != EGRESS_PASS &&
			   (action == POLICY_ACTION_PERMIT || action == POLICY_ACTION_INSPECT)) {
			frag_record(pc, FRAG_VERDICT_DROP, now);
			if (log & FLOW_LOG_DENY)
				flow_log_deny(cfg, pc, policy_id, action, verdict, ctx->ingress_ifindex, now);
			return drop(verdict);
		}
	}

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
			err = session_create(pc, cfg, policy_id, ruleset_id, punt,
					     (log & FLOW_LOG_CLOSE) ? SESSION_F_LOG_CLOSE : 0, now);
		if (err) {
			if (log & FLOW_LOG_DENY)
				flow_log_deny(cfg, pc, policy_id, action, err, ctx->ingress_ifindex, now);
			return pc->synproxy == SYNPROXY_ACK_VALID ? synproxy_refuse(ctx, pc, err) : drop(err);
		}
		screen_session_opened(pc);
		count(STAT_SESSION_CREATED);
		policy_opened(cfg, policy_id);
		if (log & FLOW_LOG_OPEN)
			flow_log_open(cfg, pc, policy_id, action, ctx->ingress_ifindex, now);
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
	if (log & FLOW_LOG_DENY)
		flow_log_deny(cfg, pc, policy_id, action,
			      action == POLICY_ACTION_REJECT		? STAT_DROP_POLICY_REJECT
			      : policy_id == SESSION_POLICY_RELATED ? STAT_DROP_POLICY_DEFAULT
								    : STAT_DROP_POLICY_DENY,
			      ctx->ingress_ifindex, now);
	if (action == POLICY_ACTION_REJECT) {
		count_bytes(STAT_DROP_POLICY_REJECT, pc->l3_len);
		if (pc->frag == FRAG_LATER)
			return HOOK_DROP;
		if (pc->protocol == IPPROTO_TCP) {
			if (reject_tcp(ctx, pc))
				return drop(STAT_DROP_INTERNAL);
			count(STAT_REJECT_TCP_RST);
		} else {
			if (reject_icmp(ctx, pc))
				return drop(STAT_DROP_INTERNAL);
			count(STAT_REJECT_ICMP);
		}
		return hook_tx(ctx);
	}
	return drop(policy_id == SESSION_POLICY_RELATED ? STAT_DROP_POLICY_DEFAULT : STAT_DROP_POLICY_DENY);
}

/* A packet for the firewall itself: one of its addresses, or link scope.
 * Judged by the zone it came from (host_inbound.bpf.h); what is let in goes
 * to the kernel, the rest is dropped here. */
HOOK_SEC
int HOOK_PROG(host)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	__u32 service = HOST_SVC_OTHER;
	int accepted;
	__u64 now;

	if (!pc || !cfg)
		return HOOK_ABORTED;
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
HOOK_SEC
int HOOK_PROG(synproxy)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	struct screen_counter *sc;
	struct zone_screen *zs;

	if (!pc || !cfg)
		return HOOK_ABORTED;
	zs = zone_screen_of(cfg, pc->zone_in);
	sc = screen_counter_of(cfg, pc->zone_in);
	switch (pc->synproxy) {
	case SYNPROXY_ANSWER_SYN:
		if (!zs || synproxy_answer_syn(ctx, pc, zs))
			return drop(STAT_DROP_INTERNAL);
		if (sc)
			sc->syn_proxy_cookies_sent += 1;
		count(STAT_SYNPROXY_COOKIE_SENT);
		return hook_tx(ctx);
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
		if (synproxy_server_synack(ctx, pc) < 0)
			return drop(STAT_DROP_INTERNAL);
		return HOOK_PASS_HANDOFF;
	case SYNPROXY_REFUSE:
		count(pc->synproxy_refusal);
		if (sc)
			sc->syn_proxy_refused += 1;
		if (reject_tcp(ctx, pc))
			return drop(STAT_DROP_INTERNAL);
		count(STAT_REJECT_TCP_RST);
		return hook_tx(ctx);
	default:
		return drop(STAT_DROP_INTERNAL);
	}
}

/* Packets of translated flows (pc->nat). Handing a packet to the kernel
 * instead of redirecting it: destination translation happens here (the kernel
 * must route the real target), source translation is left to tc_egress_prog
 * when it is all there is (the kernel must see, and answer ICMP to, the real
 * source); a flow translated both ways is handed over fully translated. */
HOOK_SEC
int HOOK_PROG(nat)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	int rc, reason = 0;

	if (!pc || !cfg)
		return HOOK_ABORTED;
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
		reason = forward_pass_reason(ctx, pc);
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

HOOK_SEC
int HOOK_PROG(forward)(hook_ctx *ctx)
{
	struct packet_ctx *pc = scratch(0);
	struct runtime_config *cfg = runtime_config();
	int rc;

	if (!pc || !cfg)
		return HOOK_ABORTED;
	rc = fib_ensure(ctx, pc, cfg);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return pass(fib_pass_reason(rc));
	return forward_packet(ctx, pc);
}

#endif
