/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What bpf/bench_sink.bpf.c counts: a per-CPU array (summed by the reader:
 * no atomics on the per-packet path) with one entry per hook the frames
 * arrive at. The receiver of `sluice bench smallpkt` reads it before and
 * after a measurement.
 */
#ifndef SLUICE_MAPS_BENCH_SINK_COUNTS_H
#define SLUICE_MAPS_BENCH_SINK_COUNTS_H

#include <linux/types.h>

enum bench_sink_hook {
	BENCH_SINK_XDP = 0, /* through the veth's receive queue: native XDP */
	BENCH_SINK_TC = 1,  /* handed to the device's receive path directly (bpf_redirect_peer): TC ingress */
	BENCH_SINK_HOOKS = 2,
};

struct bench_sink_counts {
	__u64 frames;      /* every frame that reached the program */
	__u64 flow_frames; /* of those, IPv4 UDP to the benchmark's port */
};

#endif
