/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Common base of the ABI shared by the BPF programs (bpf/) and the controller
 * (userspace/). Every struct in maps/ is declared exactly once, with fixed-width
 * types, and pinned in C++ by static_asserts in userspace/abi_layout.cpp.
 */
#ifndef SLUICE_MAPS_ABI_H
#define SLUICE_MAPS_ABI_H

#include <linux/types.h>

/*
 * The version of the pinned layout: every map's key and value and packet_ctx.
 * Raise it with any change userspace/abi_layout.cpp notices (a moved field, a
 * new size, a map's type or size). A daemon refuses pins made with another
 * version (loader/pin_abi.h) rather than read them as its own.
 */
#define SLUICE_ABI_VERSION 4

/* Limits. Each can be raised at build time; the C++ side reads the same value. */
#ifndef SLUICE_MAX_INTERFACES
#define SLUICE_MAX_INTERFACES 256      /* devmap size, zone bindings */
#endif
#ifndef SLUICE_MAX_ZONES
#define SLUICE_MAX_ZONES 256           /* zone ids are 1..MAX_ZONES-1; 0 = unzoned */
#endif
#ifndef SLUICE_MAX_SESSIONS
#define SLUICE_MAX_SESSIONS 262144     /* entries per family (two per flow) */
#endif
#ifndef SLUICE_MAX_FRAGMENTS
#define SLUICE_MAX_FRAGMENTS 16384     /* in-flight fragmented datagrams per family */
#endif
#ifndef SLUICE_FLOW_CACHE_SIZE
#define SLUICE_FLOW_CACHE_SIZE 4096    /* per CPU */
#endif

#define SLUICE_FAMILY_IPV4 4
#define SLUICE_FAMILY_IPV6 6

#endif
