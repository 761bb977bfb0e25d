/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Benchmark only (tests/bench/scale/scale_cost.cpp): the policy
 * classification alone. Parses the frame, sets the zone pair the benchmark
 * gives, and runs the shipped classify_policy() CLASSIFY_ROUNDS times, so that
 * BPF_PROG_TEST_RUN's per-run time divided by the rounds is the cost of one
 * classification. It shares the datapath's maps (the benchmark hands it their
 * fds), reads them only, and is never attached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "classify.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define CLASSIFY_ROUNDS 64

const volatile __u16 zone_in = 1;
const volatile __u16 zone_out = 2;

/* The last classification's deciding rule, for the benchmark to check. */
__u32 last_rule = CLASSIFIER_NO_RULE;

SEC("xdp")
int xdp_classify_cost(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 key = 0, rule = CLASSIFIER_NO_RULE, i;
	struct runtime_config *cfg = runtime_config();
	struct packet_ctx *pc = bpf_map_lookup_elem(&pkt_scratch, &key);

	if (!pc || !cfg)
		return XDP_ABORTED;
	if (parse_packet(pc, data, data_end) != PARSE_OK)
		return XDP_ABORTED;
	pc->zone_in = zone_in;
	pc->zone_out = zone_out;
	for (i = 0; i < CLASSIFY_ROUNDS; i++) {
		struct classifier_result *res = classify_policy(pc, cfg);

		rule = res ? res->rule : CLASSIFIER_NO_RULE;
	}
	last_rule = rule;
	return XDP_PASS;
}
