/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The parser, shared by XDP and TC: Ethernet, one 802.1Q tag, IPv4 (with
 * options), IPv6 (a bounded walk over hop-by-hop, routing, destination-options
 * and fragment headers), TCP, UDP, ICMP, ICMPv6. Every read is bounds-checked
 * against data_end right before it. A malformed or truncated packet returns the
 * counter that names what was wrong; the caller drops it.
 */
#ifndef SLUICE_BPF_PARSE_H
#define SLUICE_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/icmpv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "packet_ctx.h"

#define PARSE_OK 0
#define IPV6_EXT_MAX 8          /* extension headers walked before giving up */
/* Offsets held in packet_ctx are bounded before use so the verifier can prove
 * accesses; no legitimate header chain puts L4 further in. */
#define L4_OFF_MASK 0x3ff

/* Clamps an offset in the register the access will use; clang would otherwise
 * bound a copy and add the unbounded original. */
static __always_inline __u32 clamp_offset(__u32 off)
{
	asm volatile("%[off] &= 0x3ff" : [off] "+r"(off));
	return off;
}
#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff
#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_PSH 0x08
#define TCP_FLAG_ACK 0x10
#define TCP_FLAG_URG 0x20

#ifndef IPPROTO_MH
#define IPPROTO_MH 135
#endif

/* <linux/icmp.h> drags in libc's socket headers, so ICMP is declared here. */
#define ICMP_ECHOREPLY 0
#define ICMP_DEST_UNREACH 3
#define ICMP_SOURCE_QUENCH 4
#define ICMP_ECHO 8
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAMETERPROB 12

struct icmphdr {
	__u8 type;
	__u8 code;
	__sum16 checksum;
	union {
		struct {
			__be16 id;
			__be16 sequence;
		} echo;
		__be32 gateway;
	} un;
};

struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

/* Combinations no legitimate stack sends: scans and evasion probes. */
static __always_inline int tcp_flags_invalid(__u8 flags)
{
	if ((flags & (TCP_FLAG_SYN | TCP_FLAG_FIN)) == (TCP_FLAG_SYN | TCP_FLAG_FIN))
		return 1;
	if ((flags & (TCP_FLAG_SYN | TCP_FLAG_RST)) == (TCP_FLAG_SYN | TCP_FLAG_RST))
		return 1;
	if ((flags & 0x3f) == 0)
		return 1; /* null scan */
	if (!(flags & TCP_FLAG_ACK) && (flags & (TCP_FLAG_FIN | TCP_FLAG_PSH | TCP_FLAG_URG)))
		return 1; /* FIN/PSH/URG without ACK: xmas-style probes */
	return 0;
}

static __always_inline int icmp_is_error(__u8 type)
{
	return type == ICMP_DEST_UNREACH || type == ICMP_TIME_EXCEEDED ||
	       type == ICMP_PARAMETERPROB || type == ICMP_SOURCE_QUENCH;
}

static __always_inline int icmpv6_is_error(__u8 type)
{
	return type == ICMPV6_DEST_UNREACH || type == ICMPV6_PKT_TOOBIG ||
	       type == ICMPV6_TIME_EXCEED || type == ICMPV6_PARAMPROB;
}

/* NDP, MLD and router discovery belong to the link, never to a flow. */
static __always_inline int icmpv6_is_link(__u8 type)
{
	return (type >= 130 && type <= 137) || type == 143;
}

/* Reads the ports (or ICMP echo identifier) at l4 into the given key fields.
 * Returns 0, or -1 if fewer than 8 bytes are there. */
static __always_inline int quoted_ports(void *l4, void *data_end, __u8 protocol,
					__be16 *src_port, __be16 *dst_port)
{
	if (l4 + 8 > data_end)
		return -1;
	if (protocol == IPPROTO_TCP || protocol == IPPROTO_UDP) {
		*src_port = ((__be16 *)l4)[0];
		*dst_port = ((__be16 *)l4)[1];
	} else if (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6) {
		__u8 type = *(__u8 *)l4;
		__be16 id = ((__be16 *)l4)[2];

		if (type == ICMP_ECHO || type == ICMPV6_ECHO_REQUEST)
			*src_port = id;
		else if (type == ICMP_ECHOREPLY || type == ICMPV6_ECHO_REPLY)
			*dst_port = id;
	}
	return 0;
}

/* The packet quoted by an ICMP error, keyed the way it travelled. */
static __always_inline int parse_icmp_inner_v4(struct packet_ctx *pc, void *inner, void *data_end)
{
	struct iphdr *iph = inner;
	struct session_key_v4 *k = &pc->inner_key.v4;

	if ((void *)(iph + 1) > data_end)
		return STAT_DROP_ICMP_TRUNCATED;
	if (iph->ihl < 5)
		return STAT_DROP_ICMP_TRUNCATED;
	__builtin_memset(k, 0, sizeof(*k));
	k->src_addr = iph->saddr;
	k->dst_addr = iph->daddr;
	k->protocol = iph->protocol;
	pc->inner_l4_off = pc->inner_l3_off + iph->ihl * 4;
	if (quoted_ports(inner + iph->ihl * 4, data_end, iph->protocol, &k->src_port, &k->dst_port))
		return STAT_DROP_ICMP_TRUNCATED;
	return PARSE_OK;
}

static __always_inline int ipv6_is_ext(__u8 nexthdr)
{
	return nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_DSTOPTS || nexthdr == IPPROTO_FRAGMENT;
}

/* Extension headers walked inside a quoted packet before giving up. */
#define IPV6_QUOTED_EXT_MAX 4

static __always_inline int parse_icmp_inner_v6(struct packet_ctx *pc, void *inner, void *data_end)
{
	struct ipv6hdr *ip6 = inner;
	struct session_key_v6 *k = &pc->inner_key.v6;
	void *cursor;
	__u8 nexthdr;
	int i;

	if ((void *)(ip6 + 1) > data_end)
		return STAT_DROP_ICMPV6_TRUNCATED;
	__builtin_memset(k, 0, sizeof(*k));
	__builtin_memcpy(k->src_addr, &ip6->saddr, 16);
	__builtin_memcpy(k->dst_addr, &ip6->daddr, 16);
	/* The quoted packet may carry extension headers too: its session is
	 * keyed by its L4 protocol and ports. */
	nexthdr = ip6->nexthdr;
	cursor = ip6 + 1;
	for (i = 0; i < IPV6_QUOTED_EXT_MAX; i++) {
		__u8 *ext = cursor;

		if (!ipv6_is_ext(nexthdr))
			break;
		if ((void *)(ext + 8) > data_end)
			return STAT_DROP_ICMPV6_TRUNCATED;
		if (nexthdr == IPPROTO_FRAGMENT) {
			if (bpf_ntohs(*(__be16 *)(ext + 2)) & 0xfff8)
				return STAT_DROP_ICMPV6_TRUNCATED; /* a later fragment quotes no ports */
			cursor += 8;
		} else {
			cursor += (ext[1] + 1) * 8;
		}
		nexthdr = ext[0];
	}
	if (ipv6_is_ext(nexthdr))
		return STAT_DROP_ICMPV6_TRUNCATED;
	k->protocol = nexthdr;
	pc->inner_l4_off = pc->inner_l3_off + (__u16)(cursor - inner);
	if (quoted_ports(cursor, data_end, nexthdr, &k->src_port, &k->dst_port))
		return STAT_DROP_ICMPV6_TRUNCATED;
	return PARSE_OK;
}

/* L4 of a packet that has one (not a later fragment). l3_end bounds the
 * datagram as the IP header states it. */
static __always_inline int parse_l4(struct packet_ctx *pc, void *data, void *data_end, void *l3_end)
{
	__u32 l4_off = pc->l4_off;
	void *l4;
	__be16 *src_port = pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.src_port : &pc->key.v6.src_port;
	__be16 *dst_port = pc->family == SLUICE_FAMILY_IPV4 ? &pc->key.v4.dst_port : &pc->key.v6.dst_port;

	if (l4_off > L4_OFF_MASK)
		return STAT_DROP_IPV6_EXT_TOO_MANY;
	l4 = data + clamp_offset(l4_off);
	switch (pc->protocol) {
	case IPPROTO_TCP: {
		struct tcphdr *tcp = l4;
		__u32 doff;

		if ((void *)(tcp + 1) > data_end)
			return pc->frag == FRAG_FIRST ? STAT_DROP_FRAG_BAD : STAT_DROP_TCP_TRUNCATED;
		doff = tcp->doff * 4;
		if (doff < sizeof(*tcp))
			return STAT_DROP_TCP_BAD_HEADER;
		if (l4 + doff > data_end || l4 + doff > l3_end)
			return pc->frag == FRAG_FIRST ? STAT_DROP_FRAG_BAD : STAT_DROP_TCP_TRUNCATED;
		pc->tcp_flags = ((__u8 *)tcp)[13];
		if (tcp_flags_invalid(pc->tcp_flags))
			return STAT_DROP_TCP_BAD_FLAGS;
		*src_port = tcp->source;
		*dst_port = tcp->dest;
		pc->tcp_seq = bpf_ntohl(tcp->seq);
		pc->tcp_ack = bpf_ntohl(tcp->ack_seq);
		pc->l4_payload_len = (__u16)(pc->l3_off + pc->l3_len - pc->l4_off - doff);
		return PARSE_OK;
	}
	case IPPROTO_UDP: {
		struct udphdr *udp = l4;
		__u32 len;

		if ((void *)(udp + 1) > data_end)
			return pc->frag == FRAG_FIRST ? STAT_DROP_FRAG_BAD : STAT_DROP_UDP_TRUNCATED;
		len = bpf_ntohs(udp->len);
		/* A first fragment's length covers the whole datagram. */
		if (pc->frag == FRAG_NONE && (len < sizeof(*udp) || l4 + len > l3_end))
			return STAT_DROP_UDP_BAD_LENGTH;
		*src_port = udp->source;
		*dst_port = udp->dest;
		return PARSE_OK;
	}
	case IPPROTO_ICMP: {
		struct icmphdr *icmp = l4;

		if (pc->family != SLUICE_FAMILY_IPV4)
			return PARSE_OK;
		if ((void *)(icmp + 1) > data_end)
			return pc->frag == FRAG_FIRST ? STAT_DROP_FRAG_BAD : STAT_DROP_ICMP_TRUNCATED;
		pc->icmp_type = icmp->type;
		pc->icmp_code = icmp->code;
		if (icmp->type == ICMP_ECHO)
			*src_port = icmp->un.echo.id;
		else if (icmp->type == ICMP_ECHOREPLY)
			*dst_port = icmp->un.echo.id;
		else if (icmp_is_error(icmp->type)) {
			pc->icmp_error = 1;
			pc->inner_l3_off = pc->l4_off + sizeof(*icmp);
			return parse_icmp_inner_v4(pc, l4 + sizeof(*icmp), data_end);
		}
		return PARSE_OK;
	}
	case IPPROTO_ICMPV6: {
		struct icmp6hdr *icmp6 = l4;

		if (pc->family != SLUICE_FAMILY_IPV6)
			return PARSE_OK;
		if ((void *)(icmp6 + 1) > data_end)
			return pc->frag == FRAG_FIRST ? STAT_DROP_FRAG_BAD : STAT_DROP_ICMPV6_TRUNCATED;
		pc->icmp_type = icmp6->icmp6_type;
		pc->icmp_code = icmp6->icmp6_code;
		if (icmp6->icmp6_type == ICMPV6_ECHO_REQUEST)
			*src_port = icmp6->icmp6_identifier;
		else if (icmp6->icmp6_type == ICMPV6_ECHO_REPLY)
			*dst_port = icmp6->icmp6_identifier;
		else if (icmpv6_is_error(icmp6->icmp6_type)) {
			pc->icmp_error = 1;
			pc->inner_l3_off = pc->l4_off + sizeof(*icmp6);
			return parse_icmp_inner_v6(pc, l4 + sizeof(*icmp6), data_end);
		} else if (icmpv6_is_link(icmp6->icmp6_type))
			pc->link_local = 1;
		return PARSE_OK;
	}
	default:
		return PARSE_OK;
	}
}

/* frame_len: the frame's whole length when the hook knows it (TC: skb->len;
 * data_end then bounds only the linear part, which holds the headers), or 0
 * when the frame ends at data_end (XDP). Header reads are always checked
 * against data_end; lengths a header claims, against the frame. */
static __always_inline int parse_ipv4(struct packet_ctx *pc, void *data, void *data_end, __u32 frame_len)
{
	struct iphdr *iph = data + pc->l3_off;
	__u32 hlen, tot_len;
	__u16 frag;

	if ((void *)(iph + 1) > data_end)
		return STAT_DROP_IPV4_TRUNCATED;
	if (iph->version != 4 || iph->ihl < 5)
		return STAT_DROP_IPV4_BAD_HEADER;
	hlen = iph->ihl * 4;
	if ((void *)iph + hlen > data_end)
		return STAT_DROP_IPV4_TRUNCATED;
	tot_len = bpf_ntohs(iph->tot_len);
	if (tot_len < hlen ||
	    (frame_len ? (__u32)pc->l3_off + tot_len > frame_len : (void *)iph + tot_len > data_end))
		return STAT_DROP_IPV4_BAD_LENGTH;

	pc->family = SLUICE_FAMILY_IPV4;
	pc->protocol = iph->protocol;
	pc->ttl = iph->ttl;
	pc->l3_len = tot_len;
	pc->key.v4.src_addr = iph->saddr;
	pc->key.v4.dst_addr = iph->daddr;
	pc->key.v4.protocol = iph->protocol;

	frag = bpf_ntohs(iph->frag_off);
	if (frag & (IP_MF | IP_OFFMASK)) {
		pc->frag_id = (__u32)iph->id;
		/* A fragment ending past 64 KiB ("ping of death"): no valid
		 * datagram is that long. */
		if ((frag & IP_OFFMASK) * 8 + tot_len - hlen > 65535)
			return STAT_DROP_FRAG_OVERSIZE;
		pc->frag_start = (frag & IP_OFFMASK) * 8;
		pc->frag_end = pc->frag_start + tot_len - hlen;
		if (frag & IP_OFFMASK) {
			pc->frag = FRAG_LATER;
			return PARSE_OK;
		}
		pc->frag = FRAG_FIRST;
	}
	pc->l4_off = pc->l3_off + hlen;
	return parse_l4(pc, data, data_end, (void *)iph + tot_len);
}

static __always_inline int parse_ipv6(struct packet_ctx *pc, void *data, void *data_end, __u32 frame_len)
{
	struct ipv6hdr *ip6 = data + pc->l3_off;
	void *l3_end, *cursor;
	__u8 nexthdr;
	int i;

	if ((void *)(ip6 + 1) > data_end)
		return STAT_DROP_IPV6_TRUNCATED;
	if (ip6->version != 6)
		return STAT_DROP_IPV6_BAD_HEADER;
	l3_end = (void *)(ip6 + 1) + bpf_ntohs(ip6->payload_len);
	if (frame_len ? (__u32)pc->l3_off + sizeof(*ip6) + bpf_ntohs(ip6->payload_len) > frame_len : l3_end > data_end)
		return STAT_DROP_IPV6_BAD_LENGTH;

	pc->family = SLUICE_FAMILY_IPV6;
	pc->ttl = ip6->hop_limit;
	pc->l3_len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	__builtin_memcpy(pc->key.v6.src_addr, &ip6->saddr, 16);
	__builtin_memcpy(pc->key.v6.dst_addr, &ip6->daddr, 16);

	nexthdr = ip6->nexthdr;
	cursor = ip6 + 1;
	for (i = 0; i < IPV6_EXT_MAX; i++) {
		if (nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
		    nexthdr == IPPROTO_DSTOPTS) {
			__u8 *ext = cursor;
			__u32 len;

			if ((void *)(ext + 2) > data_end)
				return STAT_DROP_IPV6_EXT_TRUNCATED;
			len = (ext[1] + 1) * 8;
			if (cursor + len > data_end || cursor + len > l3_end)
				return STAT_DROP_IPV6_EXT_TRUNCATED;
			nexthdr = ext[0];
			cursor += len;
		} else if (nexthdr == IPPROTO_FRAGMENT) {
			struct frag_hdr {
				__u8 nexthdr;
				__u8 reserved;
				__be16 frag_off;
				__be32 identification;
			} *fh = cursor;
			__u16 off;

			if ((void *)(fh + 1) > data_end || (void *)(fh + 1) > l3_end)
				return STAT_DROP_IPV6_EXT_TRUNCATED;
			off = bpf_ntohs(fh->frag_off);
			nexthdr = fh->nexthdr;
			cursor = fh + 1;
			if (off & 0xfff9) { /* offset bits or M */
				pc->frag_id = fh->identification;
				/* Past 64 KiB of fragmentable part: see parse_ipv4. */
				if ((__u32)(off & 0xfff8) + (__u32)(l3_end - cursor) > 65535)
					return STAT_DROP_FRAG_OVERSIZE;
				pc->frag_start = off & 0xfff8;
				pc->frag_end = pc->frag_start + (__u16)(l3_end - cursor);
				if (off & 0xfff8) {
					pc->frag = FRAG_LATER;
					pc->protocol = nexthdr;
					pc->key.v6.protocol = nexthdr;
					return PARSE_OK;
				}
				pc->frag = FRAG_FIRST;
			}
		} else {
			break;
		}
	}
	if (ipv6_is_ext(nexthdr))
		return STAT_DROP_IPV6_EXT_TOO_MANY;

	pc->protocol = nexthdr;
	pc->key.v6.protocol = nexthdr;
	if (cursor > data_end)
		return STAT_DROP_IPV6_EXT_TRUNCATED;
	pc->l4_off = (__u16)(cursor - data);
	return parse_l4(pc, data, data_end, l3_end);
}

/* Fills pc from the frame at [data, data_end) (frame_len: see parse_ipv4).
 * Returns PARSE_OK, or the stat_reason to drop under, or STAT_PASS_NON_IP for
 * frames that are not IP. */
static __always_inline int parse_frame(struct packet_ctx *pc, void *data, void *data_end, __u32 frame_len)
{
	struct ethhdr *eth = data;
	__u16 proto;

	__builtin_memset(pc, 0, sizeof(*pc));
	if ((void *)(eth + 1) > data_end)
		return STAT_DROP_ETH_TRUNCATED;
	proto = bpf_ntohs(eth->h_proto);
	pc->l3_off = sizeof(*eth);
	if (proto == ETH_P_8021Q || proto == ETH_P_8021AD) {
		struct vlan_tag *tag = (void *)(eth + 1);

		if ((void *)(tag + 1) > data_end)
			return STAT_DROP_VLAN_TRUNCATED;
		pc->vlan_id = bpf_ntohs(tag->tci) & 0x0fff;
		proto = bpf_ntohs(tag->proto);
		pc->l3_off += sizeof(*tag);
		if (proto == ETH_P_8021Q || proto == ETH_P_8021AD)
			return STAT_DROP_VLAN_TOO_DEEP;
	}
	if (proto == ETH_P_IP)
		return parse_ipv4(pc, data, data_end, frame_len);
	if (proto == ETH_P_IPV6)
		return parse_ipv6(pc, data, data_end, frame_len);
	return STAT_PASS_NON_IP;
}

/* A frame whose end is data_end. */
static __always_inline int parse_packet(struct packet_ctx *pc, void *data, void *data_end)
{
	return parse_frame(pc, data, data_end, 0);
}

#endif
