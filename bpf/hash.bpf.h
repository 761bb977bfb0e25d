/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Integer hashing shared by NAT (pool choice) and the scan screen. */
#ifndef SLUICE_BPF_HASH_H
#define SLUICE_BPF_HASH_H

#include <linux/types.h>

/* murmur3's finaliser: every input bit reaches every output bit. */
static __always_inline __u32 hash_mix32(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

#endif
