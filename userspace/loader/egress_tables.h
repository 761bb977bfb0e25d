// Writes the egress policy's tables (maps/egress.h). They are not kept per
// generation like the classifier's: the new entries are written before the
// flip, stale ones removed after it, so for a moment a scope may see both its
// old and new rules (never none). egress_cfg.enabled follows: set once the
// entries are in, cleared before they go.
#pragma once

#include "common/result.h"
#include "compiler/compiled_egress.h"

namespace sluice {

class Datapath;

// Before the flip: the new entries (and `enabled` when the new config has scopes).
Status write_egress_tables(const Datapath& datapath, const CompiledEgress& egress);
// After it: entries the new config does not have (and `enabled` off when it has no scopes).
Status prune_egress_tables(const Datapath& datapath, const CompiledEgress& egress);

// The single egress_cfg entry, read-modify-write (the DNS proxy owns
// proxy_up, dns_port and mark; the config owns enabled).
Result<egress_config> read_egress_config(int fd);
Status write_egress_config(int fd, const egress_config& cfg);

}  // namespace sluice
