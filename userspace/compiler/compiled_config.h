// The compiler's output: every map entry a config turns into, for one policy
// generation. The loader writes these into the pinned maps; nothing here knows
// about file descriptors, so the compiler is testable without a kernel.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/compiled_nat.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

// One interface sluice attaches to.
struct CompiledInterface {
    std::string name;          // as in the config, e.g. "lan0" or "wan0.100"
    std::string parent;        // for a VLAN sub-interface "wan0.100": "wan0"; else empty
    uint16_t vlan_id = 0;      // 802.1Q id for a VLAN sub-interface, else 0
    uint16_t zone_id = 0;
    std::string xdp_mode;      // "auto" | "native" | "generic"
    std::string where;         // "FILE:LINE:COLUMN: interfaces.NAME", for errors found on the node
};

struct CompiledZone {
    std::string name;
    uint16_t id = 0;           // 1-based
};

struct CompiledPolicy {
    std::string name;
    uint32_t id = 0;           // index in the config's policy list
    std::string from_zone, to_zone;
    policy_action action = POLICY_ACTION_DENY;
    std::string ruleset;       // for inspect
    // What it matches, as written (empty = any), for `sluice show policies`.
    std::vector<std::string> sources, destinations, applications;
};

using PolicyBitset = policy_bitset;

// The classifier tables for one generation (see maps/policy.h).
struct CompiledPolicyTables {
    uint8_t generation = 0;
    uint16_t words = 0;        // bitset words in use: ceil(rules / 64), at least 1
    std::vector<std::pair<policy_zone_pair_key, PolicyBitset>> zone_pairs;
    std::vector<std::pair<policy_lpm_key_v4, PolicyBitset>> src_v4, dst_v4;
    std::vector<std::pair<policy_lpm_key_v6, PolicyBitset>> src_v6, dst_v6;
    // POLICY_PROTO_SLOTS * 65536 app-class ids for this generation, slot-major.
    std::vector<uint32_t> port_class;
    std::vector<std::pair<policy_app_key, PolicyBitset>> app_bits;
    std::vector<policy_rule> rules;  // index = bit index
};

struct CompiledConfig {
    std::vector<CompiledZone> zones;
    std::vector<CompiledInterface> interfaces;
    std::vector<CompiledPolicy> policies;
    CompiledPolicyTables tables;
    CompiledNat nat;           // same generation as tables
    policy_action default_action = POLICY_ACTION_DENY;
    std::array<uint64_t, TIMEOUT_CLASS_COUNT> timeout_ns{};
};

}  // namespace sluice
