/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Everything in the ABI, for code that wants all of it. */
#ifndef SLUICE_MAPS_ALL_H
#define SLUICE_MAPS_ALL_H
#include "abi.h"
#include "session.h"
#include "nat.h"
#include "punt.h"
#include "zone.h"
#include "policy.h"
#include "frag.h"
#include "flow_cache.h"
#include "runtime_config.h"
#include "stats.h"
#include "host_inbound.h"
#include "screen.h"
#include "ha.h"
#include "egress.h"
#include "observe.h"
#include "map_names.h"
#endif
