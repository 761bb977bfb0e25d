/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Observability (docs/operations.md): per-policy counters, the policies'
 * flow-log settings and the flow events the datapath hands the daemon.
 *
 * A policy's counters and log flags live at
 *   generation * POLICY_OBS_SLOTS + policy index
 * (the generation of the classifier that decided, as filter_hits does), so a
 * reload that renumbers policies never mixes their counts; the last slot of
 * a generation stands for the default action (no policy matched).
 */
#ifndef SLUICE_MAPS_OBSERVE_H
#define SLUICE_MAPS_OBSERVE_H

#include "abi.h"
#include "policy.h"
#include "session.h"

#define POLICY_OBS_SLOTS (POLICY_MAX_RULES + 1)
#define POLICY_OBS_DEFAULT POLICY_MAX_RULES
#define POLICY_OBS_ENTRIES (POLICY_GENERATIONS * POLICY_OBS_SLOTS)

/* policy_hits (per-CPU): what the policy decided. Packets and bytes of
 * packets without a session it judged (a flow's first packet; every packet
 * of a denied flow), and the sessions it opened. The packets of an open
 * session are the session's (flow logs, `show sessions`). */
struct policy_counter {
	__u64 packets;
	__u64 bytes;
	__u64 sessions;
};

/* policy_log: which events a policy logs (config `log: { open, close, deny }`). */
enum flow_log_flag {
	FLOW_LOG_OPEN = 1 << 0,
	FLOW_LOG_CLOSE = 1 << 1,
	FLOW_LOG_DENY = 1 << 2,
};

/* The flow_events ring buffer: one record per event. */
#define FLOW_EVENTS_BYTES (1 << 22)  /* 4 MiB: ~25,000 events between two reads */
/* A record wakes the daemon only when this much is waiting: below it the
 * daemon reads the ring on its own every FLOW_EVENTS_DRAIN_MS while flow
 * logging is on, so a burst of new flows costs no wakeup (in the datapath's
 * softirq and in the daemon) per event. */
#define FLOW_EVENTS_WAKEUP_BYTES (FLOW_EVENTS_BYTES / 8)
#define FLOW_EVENTS_DRAIN_MS 100

enum flow_event_type {
	FLOW_EVENT_OPEN = 1,    /* a policy opened a session */
	FLOW_EVENT_DENY = 2,    /* a packet without a session was denied, rejected or refused */
	FLOW_EVENT_CLOSE = 3,   /* a session ended in the datapath (a SYN reused its closed tuple);
	                         * the daemon's session GC reports the others itself */
};

#define FLOW_CLOSE_TUPLE_REPLY 1

struct flow_event {
	__u64 time_ns;          /* bpf_ktime_get_coarse_ns() (CLOCK_MONOTONIC_COARSE) */
	__be32 src_addr[4];     /* the packet as it arrived; IPv4 in [0] */
	__be32 dst_addr[4];
	__be16 src_port;        /* ICMP echo: the identifier */
	__be16 dst_port;
	__u8 type;              /* enum flow_event_type */
	__u8 family;            /* SLUICE_FAMILY_* */
	__u8 protocol;
	__u8 action;            /* enum policy_action of the decision */
	__u32 policy_id;        /* index in the config, or SESSION_POLICY_RELATED: the default action */
	__u32 config_generation;/* of the config that decided */
	__u32 ifindex;          /* the interface the packet arrived on */
	__u16 zone_in;
	__u16 zone_out;
	__u16 reason;           /* DENY: the enum stat_reason the packet was counted under;
	                         * CLOSE: FLOW_CLOSE_TUPLE_REPLY if the tuple is the responder's */
	__u8 tcp_flags;
	__u8 tcp_state;         /* CLOSE: enum tcp_session_state at the end */
	__u32 l3_len;           /* DENY/OPEN: this packet's bytes */
	struct session_nat nat; /* OPEN/CLOSE: the flow's translation (flags 0: none) */
	/* CLOSE: both directions' counts and when the flow began */
	__u64 created_ns;
	__u64 packets[2];       /* [0] initiator → responder, [1] back */
	__u64 bytes[2];
};

/* flow_log_limit (per-CPU, one entry): the rate limit's state, a GCRA
 * ("virtual scheduling"): an event is allowed while the theoretical arrival
 * time is at most runtime_config.flow_log_tolerance_ns ahead of now; each
 * allowed event moves it flow_log_interval_ns on. Events refused are
 * counted (flow-log-event-rate-limited), never lost silently. */
struct flow_log_limit {
	__u64 tat_ns;
};

/* Drop capture (`sluice capture`, docs/operations.md): capture_cfg, one
 * entry, written by the capture process while it runs. The pipeline's drop
 * and pass paths read its first word; nothing else looks at it, so with
 * capture off the forwarding path is unchanged. A packet whose reason
 * matches (and that the per-CPU sample lets through) goes to capture_events,
 * a perf event array, as a capture_record followed by the first caplen bytes
 * of its frame. */
#define CAPTURE_ANY_DROP 0xffffffffu   /* capture_config.reason: every drop reason */
#define CAPTURE_SNAPLEN_MAX 1518

struct capture_config {
	__u32 enabled;
	__u32 owner_pid;       /* the capture process: the daemon turns capture off when it is gone */
	__u32 reason;          /* one enum stat_reason (a drop or a pass), or CAPTURE_ANY_DROP */
	__u32 sample_every;    /* 1: every matching packet; N: one in N, per CPU */
	__u32 snaplen;         /* bytes of the frame kept, at most CAPTURE_SNAPLEN_MAX */
	__u32 pad;
};

struct capture_record {
	__u64 time_ns;         /* bpf_ktime_get_ns() */
	__u32 ifindex;         /* where the packet arrived */
	__u16 reason;          /* enum stat_reason */
	__u16 caplen;          /* frame bytes that follow */
	__u32 len;             /* the frame's length */
	__u32 pad;
};

/* capture_sample (per-CPU, one entry): the sample's count, and the record
 * being built (here, not on the stack: the drop paths of the SYN proxy have
 * little stack left). */
struct capture_scratch {
	__u64 seen;
	struct capture_record record;
};

#endif
