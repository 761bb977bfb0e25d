/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The benchmark's yardstick: the least an XDP forwarder can do (MAC swap and a
 * devmap redirect). sluice's per-packet cost is reported as a ratio to it.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} baseline_ports SEC(".maps");

const volatile __u32 egress_ifindex = 0;

SEC("xdp")
int xdp_baseline_redirect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u8 tmp[6];

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(tmp, eth->h_dest, 6);
	__builtin_memcpy(eth->h_dest, eth->h_source, 6);
	__builtin_memcpy(eth->h_source, tmp, 6);
	return bpf_redirect_map(&baseline_ports, egress_ifindex, 0);
}
