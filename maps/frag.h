/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fragment records. The first fragment of a datagram (offset 0, it carries the
 * L4 header) is classified like any packet and leaves a record here; later
 * fragments take the flow of their record. A later fragment with no record is
 * dropped and counted: nothing is passed unclassified.
 */
#ifndef SLUICE_MAPS_FRAG_H
#define SLUICE_MAPS_FRAG_H

#include "abi.h"

struct frag_key_v4 {
	__be32 src_addr;
	__be32 dst_addr;
	__be16 id;
	__u8 protocol;
	__u8 pad;
};

/* IPv6: protocol is always 0. A later fragment's fragment header names the
 * header that follows it in the first fragment (which may be an extension
 * header, RFC 8200 §4.5), not the L4 protocol; the record restores that. */
struct frag_key_v6 {
	__be32 src_addr[4];
	__be32 dst_addr[4];
	__be32 id;
	__u8 protocol;
	__u8 pad[3];
};

/* Gaps a datagram may have at once: fragments arrive in order, or nearly. */
#define FRAG_RANGES 4

enum frag_verdict {
	FRAG_VERDICT_FOLLOW = 0,   /* forward as the recorded flow */
	FRAG_VERDICT_DROP = 1,     /* the first fragment was denied */
};

struct frag_value {
	__u64 last_seen_ns;
	__be16 src_port;           /* L4 ports of the first fragment */
	__be16 dst_port;
	__u8 verdict;              /* enum frag_verdict */
	__u8 protocol;             /* L4 protocol of the first fragment */
	__u8 pad[2];
	/* The bytes of the datagram seen so far, as up to FRAG_RANGES disjoint
	 * [start, end) ranges of the fragmentable part (end 0: slot free). A
	 * fragment overlapping one of them is dropped: overlaps only serve to
	 * rewrite what the first fragment showed the policy (RFC 1858, RFC 5722). */
	__u16 range_start[FRAG_RANGES];
	__u16 range_end[FRAG_RANGES];
};

#endif
