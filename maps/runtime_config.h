/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The single-entry array the controller writes and every program reads:
 * generations, policy defaults, session timeouts and the classifier's layout.
 */
#ifndef SLUICE_MAPS_RUNTIME_CONFIG_H
#define SLUICE_MAPS_RUNTIME_CONFIG_H

#include "abi.h"
#include "policy.h"

enum timeout_class {
	TIMEOUT_TCP_SYN = 0,
	TIMEOUT_TCP_ESTABLISHED = 1,
	TIMEOUT_TCP_CLOSING = 2,
	TIMEOUT_TCP_TIME_WAIT = 3,
	TIMEOUT_UDP = 4,
	TIMEOUT_ICMP = 5,
	TIMEOUT_OTHER = 6,
	TIMEOUT_FRAGMENT = 7,
	TIMEOUT_CLASS_COUNT = 8,
};

struct runtime_config {
	__u32 fib_generation;     /* bumped on route/neighbour/config change; never 0 */
	__u32 config_generation;  /* bumped on every applied config */
	__u8 policy_generation;   /* active policy map generation, 0 or 1 */
	__u8 default_action;      /* enum policy_action for flows no policy matches */
	__u8 ha_sync;             /* 1: report flow changes on ha_events (maps/ha.h) */
	__u8 flow_log;            /* 1: some policy logs flows (maps/observe.h) */
	__u8 pad[4];
	__u64 timeout_ns[TIMEOUT_CLASS_COUNT];
	/* The flow-log rate limit per CPU (maps/observe.h, flow_log_limit):
	 * interval 0 means no limit. */
	__u64 flow_log_interval_ns;
	__u64 flow_log_tolerance_ns;
	struct classifier_layout classifier[POLICY_GENERATIONS];  /* cross tables, per generation */
};

#endif
