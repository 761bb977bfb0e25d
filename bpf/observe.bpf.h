/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the policy program tells the operator (maps/observe.h): per-policy
 * counters, and flow events (open, deny, close) on the flow_events ring
 * buffer for the daemon's flow log. Only packets without a session come
 * here: an established flow's packets cost nothing more.
 */
#ifndef SLUICE_BPF_OBSERVE_H
#define SLUICE_BPF_OBSERVE_H

#include "hook.bpf.h"
#include "maps.bpf.h"

static __always_inline __u32 policy_obs_index(const struct runtime_config *cfg, __u32 policy_id)
{
	__u32 slot = policy_id < POLICY_OBS_DEFAULT ? policy_id : POLICY_OBS_DEFAULT;

	return (cfg->policy_generation & 1) * POLICY_OBS_SLOTS + slot;
}

/* A packet without a session judged by policy_id (or the default action). */
static __always_inline void policy_account(const struct runtime_config *cfg, const struct packet_ctx *pc,
					   __u32 policy_id)
{
	__u32 key = policy_obs_index(cfg, policy_id);
	struct policy_counter *c = bpf_map_lookup_elem(&policy_hits, &key);

	if (!c)
		return;
	c->packets += 1;
	c->bytes += pc->l3_len;
}

/* ... and it opened a session. */
static __always_inline void policy_opened(const struct runtime_config *cfg, __u32 policy_id)
{
	__u32 key = policy_obs_index(cfg, policy_id);
	struct policy_counter *c = bpf_map_lookup_elem(&policy_hits, &key);

	if (c)
		c->sessions += 1;
}

/* enum flow_log_flag of the policy (0 when nothing logs: one byte read). */
static __always_inline __u32 policy_log_flags(const struct runtime_config *cfg, __u32 policy_id)
{
	__u32 key;
	__u32 *flags;

	if (!cfg->flow_log)
		return 0;
	key = policy_obs_index(cfg, policy_id);
	flags = bpf_map_lookup_elem(&policy_log, &key);
	return flags ? *flags : 0;
}

/* The rate limit (flow_log_limit's GCRA, per CPU). */
static __always_inline int flow_log_admit(const struct runtime_config *cfg, __u64 now)
{
	__u32 key = 0;
	struct flow_log_limit *l;
	__u64 tat;

	if (!cfg->flow_log_interval_ns)
		return 1;
	l = bpf_map_lookup_elem(&flow_log_limit, &key);
	if (!l)
		return 0;
	tat = l->tat_ns > now ? l->tat_ns : now;
	if (tat - now > cfg->flow_log_tolerance_ns) {
		count(STAT_FLOW_LOG_RATE_LIMITED);
		return 0;
	}
	l->tat_ns = tat + cfg->flow_log_interval_ns;
	return 1;
}

/* A record on flow_events with the packet's tuple and zones, or nothing
 * (rate limited or ring full: counted). */
static __always_inline struct flow_event *flow_event_start(const struct runtime_config *cfg,
							   const struct packet_ctx *pc, __u8 type, __u64 now)
{
	struct flow_event *e;

	if (!flow_log_admit(cfg, now))
		return 0;
	e = bpf_ringbuf_reserve(&flow_events, sizeof(*e), 0);
	if (!e) {
		count(STAT_FLOW_LOG_RING_FULL);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->time_ns = now;
	e->type = type;
	e->family = pc->family;
	e->protocol = pc->protocol;
	e->config_generation = cfg->config_generation;
	e->zone_in = pc->zone_in;
	e->zone_out = pc->zone_out;
	e->tcp_flags = pc->tcp_flags;
	e->l3_len = pc->l3_len;
	if (pc->family == SLUICE_FAMILY_IPV4) {
		e->src_addr[0] = pc->key.v4.src_addr;
		e->dst_addr[0] = pc->key.v4.dst_addr;
		e->src_port = pc->key.v4.src_port;
		e->dst_port = pc->key.v4.dst_port;
	} else {
		__builtin_memcpy(e->src_addr, pc->key.v6.src_addr, 16);
		__builtin_memcpy(e->dst_addr, pc->key.v6.dst_addr, 16);
		e->src_port = pc->key.v6.src_port;
		e->dst_port = pc->key.v6.dst_port;
	}
	return e;
}

static __always_inline void flow_event_submit(struct flow_event *e)
{
	__u64 waiting = bpf_ringbuf_query(&flow_events, BPF_RB_AVAIL_DATA);

	bpf_ringbuf_submit(e, waiting >= FLOW_EVENTS_WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	count(STAT_FLOW_LOG_EVENT);
}

/* A policy opened a session for pc (its translation in pc->nat). */
static __always_inline void flow_log_open(const struct runtime_config *cfg, const struct packet_ctx *pc,
					  __u32 policy_id, __u8 action, __u32 ifindex, __u64 now)
{
	struct flow_event *e = flow_event_start(cfg, pc, FLOW_EVENT_OPEN, now);

	if (!e)
		return;
	e->policy_id = policy_id;
	e->action = action;
	e->ifindex = ifindex;
	if (pc->nat.flags & (SESSION_NAT_SRC | SESSION_NAT_DST))
		e->nat = pc->nat;
	flow_event_submit(e);
}

/* A packet without a session that policy_id (or the default) did not let
 * through, counted under reason. */
static __always_inline void flow_log_deny(const struct runtime_config *cfg, const struct packet_ctx *pc,
					  __u32 policy_id, __u8 action, __u32 reason, __u32 ifindex, __u64 now)
{
	struct flow_event *e = flow_event_start(cfg, pc, FLOW_EVENT_DENY, now);

	if (!e)
		return;
	e->policy_id = policy_id;
	e->action = action;
	e->reason = reason;
	e->ifindex = ifindex;
	flow_event_submit(e);
}

/* The datapath removes a flow (s: the entry pc matched, peer: the other
 * direction's, if still there): its end, with both directions' counts. */
static __always_inline void flow_log_close(const struct runtime_config *cfg, const struct packet_ctx *pc,
					   const struct session_value *s, const struct session_value *peer,
					   __u32 ifindex, __u64 now)
{
	const struct session_value *initiator = (s->flags & SESSION_F_REPLY) ? peer : s;
	const struct session_value *responder = (s->flags & SESSION_F_REPLY) ? s : peer;
	struct flow_event *e = flow_event_start(cfg, pc, FLOW_EVENT_CLOSE, now);

	if (!e)
		return;
	e->policy_id = s->policy_id;
	e->config_generation = s->policy_generation;
	e->zone_in = s->zone_in;
	e->zone_out = s->zone_out;
	e->tcp_state = s->tcp_state;
	e->created_ns = s->created_ns;
	/* The flow ended with its last packet, before this SYN. */
	e->time_ns = s->last_seen_ns;
	if (peer && peer->last_seen_ns > e->time_ns)
		e->time_ns = peer->last_seen_ns;
	e->ifindex = ifindex;
	/* The tuple is this packet's: the initiator's unless it matched the
	 * reply entry. */
	e->reason = (s->flags & SESSION_F_REPLY) ? FLOW_CLOSE_TUPLE_REPLY : 0;
	if (initiator) {
		e->packets[0] = initiator->packets;
		e->bytes[0] = initiator->bytes;
		if (initiator->nat.flags & (SESSION_NAT_SRC | SESSION_NAT_DST))
			e->nat = initiator->nat;
	}
	if (responder) {
		e->packets[1] = responder->packets;
		e->bytes[1] = responder->bytes;
	}
	flow_event_submit(e);
}

/* `sluice capture` (maps/observe.h): a packet dropped (or passed) under
 * reason goes to capture_events with its first snaplen bytes, when capture
 * is on, the reason is the one asked for and the sample lets it through.
 * A global function: the verifier checks it once, not at each of the
 * pipeline's drop and pass sites (which would double its work). */
__noinline int capture_packet(hook_ctx *ctx, __u32 reason, __u32 dropped)
{
	__u32 key = 0;
	struct capture_config *c = bpf_map_lookup_elem(&capture_cfg, &key);
	struct capture_scratch *s;
	__u64 caplen;

	if (!ctx || !c || !c->enabled)
		return 0;
	if (c->reason == CAPTURE_ANY_DROP ? !dropped : c->reason != reason)
		return 0;
	s = bpf_map_lookup_elem(&capture_sample, &key);
	if (!s)
		return 0;
	s->seen += 1;
	if (c->sample_every > 1 && (s->seen % c->sample_every) != 0)
		return 0;
	s->record.time_ns = bpf_ktime_get_ns();
	s->record.ifindex = ctx->ingress_ifindex;
	s->record.reason = reason;
	s->record.len = hook_frame_len(ctx);
	caplen = s->record.len < c->snaplen ? s->record.len : c->snaplen;
	if (caplen > CAPTURE_SNAPLEN_MAX)
		caplen = CAPTURE_SNAPLEN_MAX;
	s->record.caplen = caplen;
	/* The helper appends the frame's first caplen bytes to the record. */
	bpf_perf_event_output(ctx, &capture_events, BPF_F_CURRENT_CPU | (caplen << 32), &s->record,
			      sizeof(s->record));
	return 1;
}

#endif
