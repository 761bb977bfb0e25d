// The compiler's output: every map entry a config turns into, for one policy
// generation. The loader writes these into the pinned maps; nothing here knows
// about file descriptors, so the compiler is testable without a kernel.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
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
    uint16_t filter_id = 0;    // CompiledFilter::id of its `filter:`, 0 = none
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

// The classifier's tables for one generation (maps/policy.h): policies and
// stateless filters together, told apart by their scope.
struct CompiledClassifier {
    uint8_t generation = 0;
    std::vector<std::pair<classifier_scope_key, uint32_t>> scopes;
    std::vector<std::pair<policy_lpm_key_v4, uint32_t>> src_v4, dst_v4;
    std::vector<std::pair<policy_lpm_key_v6, uint32_t>> src_v6, dst_v6;
    // POLICY_PROTO_SLOTS * 65536 class ids each, slot-major.
    std::vector<uint32_t> port_class, sport_class;
    // Absolute positions in pol_cross (this generation's half).
    classifier_layout layout{};
    // pol_cross from layout.table[0].base on: every table, back to back.
    std::vector<uint32_t> cross;
    // Index = result id; [0] is unused (0 = no rule).
    std::vector<classifier_result> results;

    // The rules of every class of the five fields (scope, source, destination,
    // destination port, source port), by class id: for tests and diagnostics.
    std::array<std::vector<std::vector<uint64_t>>, 5> field_sets;

    // For `check` and `show`.
    uint32_t rule_count = 0;
    std::array<uint32_t, 5> field_classes{};   // scope, src, dst, dport, sport (incl. empty)
    std::array<uint32_t, 3> combined_classes{}; // after T_SCOPE_APP, T_SPORT, T_SRC_DST
    uint64_t map_bytes = 0;                     // estimated kernel memory of this generation
};

// A stateless filter (config `filters:`), and where its rules count.
struct CompiledFilterRule {
    std::string name;
    std::string action;        // "accept" | "drop" | "count"
    uint32_t slot = 0;         // filter_hits index within a generation
};

struct CompiledFilter {
    std::string name;
    uint16_t id = 0;           // 1-based, as zone_value.filter_id
    std::vector<std::string> interfaces;
    std::vector<CompiledFilterRule> rules;
};

struct CompiledConfig {
    std::vector<CompiledZone> zones;
    std::vector<CompiledInterface> interfaces;
    std::vector<CompiledPolicy> policies;
    std::vector<CompiledFilter> filters;
    CompiledClassifier tables;
    CompiledNat nat;           // same generation as tables
    policy_action default_action = POLICY_ACTION_DENY;
    std::array<uint64_t, TIMEOUT_CLASS_COUNT> timeout_ns{};
};

}  // namespace sluice
