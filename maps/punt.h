/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Flags that send a session's packets to the inspection stage (inspection issue). */
#ifndef SLUICE_MAPS_PUNT_H
#define SLUICE_MAPS_PUNT_H

enum session_punt_flags {
	SESSION_PUNT_INSPECT = 1 << 0,
};

#endif
