/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sluice datapath, TC build: the pipeline (pipeline.bpf.h) as TC ingress
 * programs, tc_main_prog → tc_zone_prog → ... → tc_forward_prog, for the
 * `tc` mode (hook.bpf.h says why). Its maps are sluice_bpf's (pinned by
 * name, or handed over by the loader), but for its own tc_jump_table.
 */
#define SLUICE_HOOK_TC 1
#include "pipeline.bpf.h"

char LICENSE[] SEC("license") = "GPL";
