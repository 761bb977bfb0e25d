/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * skb->mark values of packets the TC pipeline (the `tc` mode) sent out with
 * bpf_redirect. A redirect on TC passes through the egress device's TC
 * egress hook, where tc_egress_prog must leave alone what the pipeline
 * already forwarded and translated; it clears the mark. The two say which
 * XDP verdict the redirect stands for: out of the ingress port (XDP_TX: a
 * reject, a SYN cookie) or out of another (XDP_REDIRECT). An XDP redirect
 * never meets TC.
 */
#ifndef SLUICE_MAPS_TC_MARKS_H
#define SLUICE_MAPS_TC_MARKS_H

#define SLUICE_TC_REDIRECT_MARK 0x51c0f0dU  /* forwarded: XDP_REDIRECT */
#define SLUICE_TC_TX_MARK 0x51c0f0eU        /* back out of the ingress port: XDP_TX */

#endif
