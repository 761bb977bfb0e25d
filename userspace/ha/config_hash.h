// A hash of the ha: section as both nodes must run it (docs/ha.md
// "Messages"): carried in every datagram, so two nodes whose sections differ
// refuse each other's messages instead of syncing into maps they disagree on.
#pragma once

#include <cstdint>

#include "config/ha_config.h"

namespace sluice::ha {

uint32_t config_hash(const config::Ha& ha);

}  // namespace sluice::ha
