/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Address translation carried by a session entry (the NAT issue fills it). */
#ifndef SLUICE_MAPS_NAT_H
#define SLUICE_MAPS_NAT_H

#include "abi.h"

/* Address translation applied to packets of this entry's direction (NAT issue).
 * IPv4 addresses occupy word 0. */
struct session_nat {
	__be32 new_src_addr[4];
	__be32 new_dst_addr[4];
	__be16 new_src_port;
	__be16 new_dst_port;
	__u8 flags;            /* SESSION_NAT_* */
	__u8 pad[3];
};

enum session_nat_flags {
	SESSION_NAT_SRC = 1 << 0,
	SESSION_NAT_DST = 1 << 1,
};

#endif
