/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Internet checksum arithmetic (RFC 1071 / RFC 1624). */
#ifndef SLUICE_BPF_CHECKSUM_H
#define SLUICE_BPF_CHECKSUM_H

#include <linux/types.h>
#include <bpf/bpf_endian.h>

static __always_inline __u16 csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Sum of 16-bit words of a fixed-size, 2-byte aligned object (headers we build). */
static __always_inline __u64 csum_words(const void *p, int len)
{
	const __u16 *w = p;
	__u64 sum = 0;
	int i;

	for (i = 0; i < len / 2; i++)
		sum += w[i];
	return sum;
}

/* Sum over packet bytes [start, start + len) in 4-byte steps; len must be a
 * multiple of 4 and at most max_words * 4. Each load is bounds-checked. */
static __always_inline __u64 csum_packet(void *start, __u32 len, void *data_end, const int max_words)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < max_words; i++) {
		__u32 *w = start + i * 4;

		if (i * 4 >= len)
			break;
		if ((void *)(w + 1) > data_end)
			break;
		sum += *w;
	}
	return sum;
}

/* Folds without the final complement: the value a CHECKSUM_PARTIAL field
 * holds (the pseudo-header sum). */
static __always_inline __u16 csum_fold_raw(__u64 sum)
{
	return (__u16)~csum_fold(sum);
}

/* RFC 1624 eqn. 3: a checksum over data in which 32-bit words changed from
 * old to new changes by the sum of ~old + new. Sums of raw (network order)
 * words, like everything here: one's-complement sums are byte-order neutral. */
static __always_inline __u64 csum_delta32(const __be32 *old, const __be32 *new, const int words)
{
	__u64 d = 0;
	int i;

	for (i = 0; i < words; i++)
		d += (__u32)~old[i] + (__u64)new[i];
	return d;
}

static __always_inline __u64 csum_delta16(__u16 old, __u16 new)
{
	return (__u16)~old + (__u32)new;
}

/* A complete checksum field after the data it covers changed by delta. */
static __always_inline __u16 csum_apply(__u16 check, __u64 delta)
{
	return csum_fold((__u16)~check + delta);
}

/* A partial (CHECKSUM_PARTIAL) field after its pseudo-header changed by delta:
 * it holds the pseudo-header sum uncomplemented, so it moves the other way. */
static __always_inline __u16 csum_apply_partial(__u16 check, __u64 delta)
{
	return csum_fold_raw(check + delta);
}

/* IPv4 TTL decrement with the incremental update from RFC 1624. */
static __always_inline void ipv4_decrement_ttl(__u8 *ttl, __sum16 *check)
{
	__u32 c = *check;

	c += bpf_htons(0x0100);
	*check = (__sum16)(c + (c >= 0xffff));
	*ttl -= 1;
}

#endif
