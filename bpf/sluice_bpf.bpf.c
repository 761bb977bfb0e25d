/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sluice datapath, XDP build. One object, one skeleton (sluice_bpf.skel.h):
 *
 *   xdp_*_prog     the pipeline (pipeline.bpf.h) on the XDP hook:
 *                  xdp_main_prog → xdp_zone_prog → [xdp_policy_prog] → [xdp_nat_prog] → xdp_forward_prog,
 *                  with xdp_host_prog, xdp_synproxy_prog, xdp_splice_prog
 *   tc_egress_prog (packets the kernel forwarded: session + NAT; the firewall's own flows)
 *   tc_punt_prog   (TC ingress: punted packets to the inspection stage's sockets)
 *
 * The same pipeline on TC ingress is sluice_tc.bpf.c (the `tc` mode); it
 * shares these maps and hands off to this object's tc_punt_prog.
 * Program names are part of the interface: perf shows bpf_prog_<tag>_<name>.
 */
#include "pipeline.bpf.h"
#include "nat_tc.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Packets the kernel forwards (the fast path passed them, e.g. while the
 * neighbour was unresolved): the session learns the egress the kernel chose,
 * so the flow's next packets take the XDP path. */
SEC("tc")
int tc_egress_prog(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct packet_ctx *pc = scratch(1);
	struct runtime_config *cfg = runtime_config();
	struct session_value *s;
	struct ethhdr *eth = data;
	__u32 mtu = 0;

	/* Forwarded by the TC pipeline (`tc` mode): session and NAT are done. */
	if (skb->mark == SLUICE_TC_REDIRECT_MARK || skb->mark == SLUICE_TC_TX_MARK) {
		skb->mark = 0;
		return TC_ACT_OK;
	}
	if (!pc || !cfg)
		return TC_ACT_OK;
	/* Against skb->len: a GSO packet's payload is in its fragments, only
	 * the headers are in [data, data_end). */
	if (parse_frame(pc, data, data_end, skb->len) != PARSE_OK || pc->frag == FRAG_LATER)
		return TC_ACT_OK;
	if ((void *)(eth + 1) > data_end)
		return TC_ACT_OK;
	if (pc->icmp_error)
		return nat_tc_icmp_error(skb, pc);
	s = session_lookup(pc->family, &pc->key);
	if (!s) {
		host_flow_note(skb, pc);
		return TC_ACT_OK;
	}
	count(STAT_TC_EGRESS_SESSION);
	s->last_seen_ns = bpf_ktime_get_coarse_ns();
	if (s->fib.generation != cfg->fib_generation && pc->l3_off == sizeof(*eth) &&
	    bpf_check_mtu(skb, skb->ifindex, &mtu, 0, 0) == BPF_MTU_CHK_RET_SUCCESS) {
		s->fib.ifindex = skb->ifindex;
		__builtin_memcpy(s->fib.dst_mac, eth->h_dest, 6);
		__builtin_memcpy(s->fib.src_mac, eth->h_source, 6);
		__u32 out = skb->ifindex;

		s->fib.mtu = mtu;
		s->fib.flags = fib_port_flags(out);
		s->fib.generation = cfg->fib_generation;
	}
	/* A packet XDP handed over untranslated (maps/nat.h, xdp_nat_prog). */
	if (s->nat.flags & SESSION_NAT_ANY) {
		pc->nat = s->nat;
		if (nat_rewrite_skb(skb, pc)) {
			count_bytes(STAT_DROP_INTERNAL, pc->l3_len);
			return TC_ACT_SHOT;
		}
		count(STAT_TC_EGRESS_NAT);
	}
	return TC_ACT_OK;
}

/* The record the pipeline left for tc_punt_prog, copied into out: in this
 * CPU's tc_handoff slot when the pipeline ran on TC (the `tc` mode) or in
 * generic XDP on a kernel without bpf_xdp_adjust_meta, else in the metadata
 * area in front of the frame. Returns its magic
 * (PUNT_META_MAGIC, SYNPROXY_META_MAGIC), 0 when the packet has none. */
static __always_inline __u16 handoff_take(struct __sk_buff *skb, struct tc_handoff *out)
{
	void *meta = (void *)(long)skb->data_meta;
	void *data = (void *)(long)skb->data;
	struct tc_handoff *h;
	__u32 slot = 0;
	__u16 magic;

	h = bpf_map_lookup_elem(&tc_handoff, &slot);
	if (h && h->punt.magic) {
		magic = h->punt.magic;
		*out = *h;
		h->punt.magic = 0;
		if (h->ifindex != skb->ifindex)
			return 0;
		/* Generic XDP saw the frame with its 802.1Q tag, which the
		 * kernel takes off (into the skb) before TC ingress. */
		return h->len == skb->len || (skb->vlan_present && h->len == skb->len + 4) ? magic : 0;
	}
	if (meta + sizeof(__u16) > data)
		return 0;
	magic = *(__u16 *)meta;
	if (magic == SYNPROXY_META_MAGIC && meta + sizeof(struct synproxy_meta) <= data) {
		__builtin_memcpy(&out->synproxy, meta, sizeof(struct synproxy_meta));
		return magic;
	}
	if (magic == PUNT_META_MAGIC && meta + sizeof(struct punt_meta) <= data) {
		__builtin_memcpy(&out->punt, meta, sizeof(struct punt_meta));
		return magic;
	}
	return 0;
}

/* TC ingress: a packet the pipeline punted (handoff_take) is assigned to the
 * inspection stage's socket and marked for the local policy route. A punted
 * packet the stage has no socket for is dropped, or with the stage down and
 * its ruleset failing open, left to the kernel (the session is released). */
SEC("tc")
int tc_punt_prog(struct __sk_buff *skb)
{
	void *data, *data_end;
	struct tc_handoff record;
	struct punt_meta *meta = &record.punt;
	struct packet_ctx *pc = scratch(2);
	struct punt_config *cfg = punt_config();
	struct punt_ruleset_stats *st;
	struct bpf_sock *sk = 0;
	__be16 tcp_port, udp_port;
	__u32 mark;
	int reply, err, dns;
	__u16 magic = handoff_take(skb, &record);

	/* The end of a handshake the SYN proxy held (synproxy.bpf.h). */
	if (magic == SYNPROXY_META_MAGIC)
		return pc ? tc_synproxy_complete(skb, pc, &record.synproxy) : TC_ACT_SHOT;
	if (magic != PUNT_META_MAGIC)
		return TC_ACT_OK;
	/* The headers linear (a segment from a veth, a GRO aggregate: the
	 * payload may be in fragments), the lengths against skb->len. */
	if (bpf_skb_pull_data(skb, skb->len < HANDOFF_HEADER_PULL ? skb->len : HANDOFF_HEADER_PULL))
		return TC_ACT_SHOT;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	reply = meta->reply;
	st = punt_ruleset_stats(meta->ruleset_id);
	if (!pc || !cfg)
		return TC_ACT_SHOT;
	if (parse_frame(pc, data, data_end, skb->len) != PARSE_OK)
		return TC_ACT_SHOT;
	tcp_port = cfg->tcp_port;
	udp_port = cfg->udp_port;
	mark = cfg->mark;
	dns = (meta->ruleset_id & SLUICE_EGRESS_DNS_RULESET_MASK) == SLUICE_EGRESS_DNS_RULESET_BASE;
	if (dns) {
		/* Steered DNS (egress.bpf.h) goes to the DNS proxy's listeners. */
		struct egress_config *egress = egress_config();

		if (!egress)
			return TC_ACT_SHOT;
		tcp_port = udp_port = egress->dns_port;
		mark = egress->mark;
	}
	/* Later fragments carry no ports: the kernel reassembles locally. */
	if (pc->frag != FRAG_LATER) {
		if (pc->protocol == IPPROTO_TCP)
			sk = punt_tcp_socket(skb, pc, tcp_port, reply);
		else if (pc->protocol == IPPROTO_UDP)
			sk = punt_udp_socket(skb, pc, udp_port, reply, dns);
		if (!sk && !reply && punt_opens_flow(pc) && punt_fails_open(meta->ruleset_id)) {
			/* No listener: the stage died without saying so. */
			struct session_value *s = session_lookup(pc->family, &pc->key);

			if (s)
				punt_release(pc, s);
			if (st)
				st->fail_open_packets++;
			count(STAT_INSPECT_FAIL_OPEN);
			return TC_ACT_OK;
		}
		if (!sk) {
			if (st)
				st->no_socket_packets++;
			count_bytes(STAT_DROP_PUNT_NO_SOCKET, pc->l3_len);
			return TC_ACT_SHOT;
		}
		err = bpf_sk_assign(skb, sk, 0);
		bpf_sk_release(sk);
		if (err) {
			count_bytes(STAT_DROP_INTERNAL, pc->l3_len);
			return TC_ACT_SHOT;
		}
	}
	skb->mark = mark;
	count(STAT_PUNT_ASSIGNED);
	return TC_ACT_OK;
}
