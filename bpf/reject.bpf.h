/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `reject`: the answer is built in place and sent back out of the ingress
 * interface (XDP_TX, or its TC equivalent: hook.bpf.h). TCP gets a RST (RFC 9293 §3.10.7.1: seq from the
 * ACK if there was one, else seq 0 and ACK of everything the segment occupied);
 * everything else gets destination-unreachable / administratively prohibited
 * (ICMP 3/13, ICMPv6 1/1) from the original destination, quoting the original
 * datagram (IPv4: up to 548 bytes, IPv6: up to 1232, so the answer fits 576 /
 * 1280), cut to a multiple of 4 bytes. TTL / hop limit 64; any VLAN tag kept.
 */
#ifndef SLUICE_BPF_REJECT_H
#define SLUICE_BPF_REJECT_H

#include "checksum.bpf.h"
#include "parse.bpf.h"
#include "maps.bpf.h"
#include "hook.bpf.h"

#define REJECT_TTL 64
#define REJECT_QUOTE_MAX_V4 548
#define REJECT_QUOTE_MAX_V6 1232
#define IP_DF 0x4000

struct l2_header {
	__u8 dst[6];
	__u8 src[6];
	__be16 proto;
	struct vlan_tag tag;     /* only when has_tag */
};

/* Copies the old Ethernet header (+ tag) with the MACs swapped. */
static __always_inline int read_l2_swapped(void *data, void *data_end, __u32 l2_len, struct l2_header *out)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return -1;
	__builtin_memcpy(out->dst, eth->h_source, 6);
	__builtin_memcpy(out->src, eth->h_dest, 6);
	out->proto = eth->h_proto;
	if (l2_len > sizeof(*eth)) {
		struct vlan_tag *tag = (void *)(eth + 1);

		if ((void *)(tag + 1) > data_end)
			return -1;
		out->tag = *tag;
	}
	return 0;
}

static __always_inline int write_l2(void *data, void *data_end, __u32 l2_len, const struct l2_header *h)
{
	if (l2_len > sizeof(struct ethhdr)) {
		if (data + sizeof(*h) > data_end)
			return -1;
		__builtin_memcpy(data, h, sizeof(*h));
	} else {
		if (data + sizeof(struct ethhdr) > data_end)
			return -1;
		__builtin_memcpy(data, h, sizeof(struct ethhdr));
	}
	return 0;
}

static __always_inline __u32 rst_seq(const struct packet_ctx *pc)
{
	return (pc->tcp_flags & TCP_FLAG_ACK) ? pc->tcp_ack : 0;
}

static __always_inline __u32 rst_ack(const struct packet_ctx *pc)
{
	return pc->tcp_seq + pc->l4_payload_len + !!(pc->tcp_flags & TCP_FLAG_SYN) +
	       !!(pc->tcp_flags & TCP_FLAG_FIN);
}

static __always_inline void fill_rst(struct tcphdr *tcp, const struct packet_ctx *pc,
				     __be16 src_port, __be16 dst_port)
{
	__builtin_memset(tcp, 0, sizeof(*tcp));
	tcp->source = dst_port;
	tcp->dest = src_port;
	tcp->doff = 5;
	tcp->rst = 1;
	tcp->seq = bpf_htonl(rst_seq(pc));
	if (!(pc->tcp_flags & TCP_FLAG_ACK)) {
		tcp->ack = 1;
		tcp->ack_seq = bpf_htonl(rst_ack(pc));
	}
}

/* Shrinks or grows the frame's tail so it is new_len bytes long. */
static __always_inline int set_frame_len(hook_ctx *ctx, __u32 new_len)
{
	return hook_set_frame_len(ctx, new_len) ? -1 : 0;
}

static __always_inline int reject_tcp(hook_ctx *ctx, struct packet_ctx *pc)
{
	__u32 l2_len = pc->l3_off == sizeof(struct ethhdr) ? sizeof(struct ethhdr) : sizeof(struct l2_header);
	__u32 l3_len = pc->family == SLUICE_FAMILY_IPV4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct l2_header l2 = {};
	void *data, *data_end;
	struct tcphdr *tcp;
	__u64 sum;

	if (read_l2_swapped((void *)(long)ctx->data, (void *)(long)ctx->data_end, l2_len, &l2))
		return -1;
	if (set_frame_len(ctx, l2_len + l3_len + sizeof(struct tcphdr)))
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (write_l2(data, data_end, l2_len, &l2))
		return -1;

	if (pc->family == SLUICE_FAMILY_IPV4) {
		struct iphdr *iph = data + l2_len;

		tcp = (void *)(iph + 1);
		if ((void *)(tcp + 1) > data_end)
			return -1;
		__builtin_memset(iph, 0, sizeof(*iph));
		iph->version = 4;
		iph->ihl = 5;
		iph->tot_len = bpf_htons(sizeof(*iph) + sizeof(*tcp));
		iph->frag_off = bpf_htons(IP_DF);
		iph->ttl = REJECT_TTL;
		iph->protocol = IPPROTO_TCP;
		iph->saddr = pc->key.v4.dst_addr;
		iph->daddr = pc->key.v4.src_addr;
		iph->check = csum_fold(csum_words(iph, sizeof(*iph)));
		fill_rst(tcp, pc, pc->key.v4.src_port, pc->key.v4.dst_port);
		sum = csum_words(&iph->saddr, 8) + bpf_htons(IPPROTO_TCP) + bpf_htons(sizeof(*tcp));
	} else {
		struct ipv6hdr *ip6 = data + l2_len;

		tcp = (void *)(ip6 + 1);
		if ((void *)(tcp + 1) > data_end)
			return -1;
		__builtin_memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		ip6->payload_len = bpf_htons(sizeof(*tcp));
		ip6->nexthdr = IPPROTO_TCP;
		ip6->hop_limit = REJECT_TTL;
		__builtin_memcpy(&ip6->saddr, pc->key.v6.dst_addr, 16);
		__builtin_memcpy(&ip6->daddr, pc->key.v6.src_addr, 16);
		fill_rst(tcp, pc, pc->key.v6.src_port, pc->key.v6.dst_port);
		sum = csum_words(&ip6->saddr, 32) + bpf_htons(IPPROTO_TCP) + bpf_htons(sizeof(*tcp));
	}
	sum += csum_words(tcp, sizeof(*tcp));
	tcp->check = csum_fold(sum);
	return 0;
}

/* ICMP / ICMPv6 "administratively prohibited", quoting the original datagram,
 * which stays where it is: only the new headers are written in front of it. */
static __always_inline int reject_icmp(hook_ctx *ctx, struct packet_ctx *pc)
{
	int v4 = pc->family == SLUICE_FAMILY_IPV4;
	__u32 l2_len = pc->l3_off == sizeof(struct ethhdr) ? sizeof(struct ethhdr) : sizeof(struct l2_header);
	__u32 head = v4 ? sizeof(struct iphdr) + 8 : sizeof(struct ipv6hdr) + 8;
	__u32 quote = pc->l3_len;
	struct l2_header l2 = {};
	void *data, *data_end, *quoted;
	__u8 *icmp;
	__u64 sum;

	if (v4 && quote > REJECT_QUOTE_MAX_V4)
		quote = REJECT_QUOTE_MAX_V4;
	if (!v4 && quote > REJECT_QUOTE_MAX_V6)
		quote = REJECT_QUOTE_MAX_V6;
	quote &= ~3u;

	if (read_l2_swapped((void *)(long)ctx->data, (void *)(long)ctx->data_end, l2_len, &l2))
		return -1;
	if (hook_adjust_head(ctx, -(int)head))
		return -1;
	if (set_frame_len(ctx, l2_len + head + quote))
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (write_l2(data, data_end, l2_len, &l2))
		return -1;

	if (v4) {
		struct iphdr *iph = data + l2_len;

		icmp = (void *)(iph + 1);
		if ((void *)(icmp + 8) > data_end)
			return -1;
		__builtin_memset(iph, 0, sizeof(*iph));
		iph->version = 4;
		iph->ihl = 5;
		iph->tot_len = bpf_htons(head + quote);
		iph->ttl = REJECT_TTL;
		iph->protocol = IPPROTO_ICMP;
		iph->saddr = pc->key.v4.dst_addr;
		iph->daddr = pc->key.v4.src_addr;
		iph->check = csum_fold(csum_words(iph, sizeof(*iph)));
		__builtin_memset(icmp, 0, 8);
		icmp[0] = ICMP_DEST_UNREACH;
		icmp[1] = 13; /* ICMP_PKT_FILTERED: communication administratively prohibited */
		sum = 0;
	} else {
		struct ipv6hdr *ip6 = data + l2_len;

		icmp = (void *)(ip6 + 1);
		if ((void *)(icmp + 8) > data_end)
			return -1;
		__builtin_memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		ip6->payload_len = bpf_htons(8 + quote);
		ip6->nexthdr = IPPROTO_ICMPV6;
		ip6->hop_limit = REJECT_TTL;
		__builtin_memcpy(&ip6->saddr, pc->key.v6.dst_addr, 16);
		__builtin_memcpy(&ip6->daddr, pc->key.v6.src_addr, 16);
		__builtin_memset(icmp, 0, 8);
		icmp[0] = ICMPV6_DEST_UNREACH;
		icmp[1] = ICMPV6_ADM_PROHIBITED;
		sum = csum_words(&ip6->saddr, 32) + bpf_htons(8 + quote) + bpf_htons(IPPROTO_ICMPV6);
	}
	quoted = icmp + 8;
	sum += csum_words(icmp, 8);
	sum += csum_packet(quoted, quote, data_end, REJECT_QUOTE_MAX_V6 / 4);
	((__sum16 *)icmp)[1] = csum_fold(sum);
	return 0;
}

#endif
