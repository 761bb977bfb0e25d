// The NAT rule tables of one generation (maps/nat.h), written into the
// datapath's maps. Datapath::apply calls this before its runtime_config flip,
// like the policy tables; live NAT state (nat_ifaddrs, nat_ports) is not
// touched here.
#pragma once

#include "common/result.h"
#include "compiler/compiled_nat.h"

namespace sluice {

class Datapath;

// Removes every entry of nat.generation from the generation-keyed NAT maps,
// then writes nat's entries, and every slot of that generation in the array
// maps (nat_src_rules, nat_pools). Only for the inactive generation: no packet
// reads it, so a failure half-way changes nothing a packet sees, and the
// entries a config without NAT leaves are none.
Status write_nat_generation(const Datapath& datapath, const CompiledNat& nat);

}  // namespace sluice
