/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The receiver of `sluice bench smallpkt`, on the WAN host's veth: counts
 * every frame the firewall delivers and drops it, before the host makes
 * anything of it (its stack would answer UDP to a closed port), so the
 * count is what left the firewall.
 *
 * Two hooks, because frames reach a veth two ways. Whatever the firewall
 * transmits into its end of the pair (kernel forwarding, a redirect from
 * XDP or TC) crosses the pair into this end's receive queue, where the
 * native XDP program sees it first. A native program here is also what lets
 * a frame redirected by XDP into the firewall's end arrive at all (without
 * an XDP program or GRO on this end it is lost), the same for every
 * configuration. A frame sent with bpf_redirect_peer (sluice's tc mode)
 * skips the pair and the queue and enters this device's receive path
 * directly, where XDP never runs: the TC ingress program counts it. A frame
 * is dropped by the first program that sees it, so it is counted once.
 *
 * flow_frames counts only the benchmark's own frames (IPv4 UDP to
 * flow_port), so the odd neighbour solicitation or ARP is told apart.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "bench_sink_counts.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BENCH_SINK_HOOKS);
	__type(key, __u32);
	__type(value, struct bench_sink_counts);
} sink_counts SEC(".maps");

const volatile __u16 flow_port = 0; /* host byte order; set before load */

static __always_inline void count(__u32 hook, void *data, void *data_end)
{
	struct bench_sink_counts *c = bpf_map_lookup_elem(&sink_counts, &hook);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	if (!c)
		return;
	c->frames++;
	if ((void *)(udp + 1) <= data_end && eth->h_proto == bpf_htons(ETH_P_IP) && ip->ihl == 5 &&
	    ip->protocol == IPPROTO_UDP && udp->dest == bpf_htons(flow_port))
		c->flow_frames++;
}

SEC("xdp")
int xdp_bench_sink(struct xdp_md *ctx)
{
	count(BENCH_SINK_XDP, (void *)(long)ctx->data, (void *)(long)ctx->data_end);
	return XDP_DROP;
}

SEC("tc")
int tc_bench_sink(struct __sk_buff *skb)
{
	count(BENCH_SINK_TC, (void *)(long)skb->data, (void *)(long)skb->data_end);
	return TC_ACT_SHOT;
}
