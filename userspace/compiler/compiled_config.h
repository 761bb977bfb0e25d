// The compiler's output: every map entry a config turns into, for one policy
// generation. The loader writes these into the pinned maps; nothing here knows
// about file descriptors, so the compiler is testable without a kernel.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/compiled_egress.h"
#include "compiler/compiled_host_inbound.h"
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
    std::string xdp_mode;      // "auto" | "native" | "generic" | "tc"
    std::string where;         // "FILE:LINE:COLUMN: interfaces.NAME", for errors found on the node
    uint8_t ha_group = 0;      // its ha: redundancy group (1-based), 0 = none
};

struct CompiledZone {
    std::string name;
    uint16_t id = 0;           // 1-based
    // The scan screen's thresholds as configured (distinct ports / hosts);
    // zone_screen holds them as bit counts.
    uint32_t scan_ports = 0;
    uint32_t scan_hosts = 0;
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

// The order of CompiledClassifier::sparse: (group, table, left, right).
inline std::tuple<uint8_t, uint8_t, uint32_t, uint32_t> sparse_order(const classifier_sparse_key& k) {
    return {k.group, k.table, k.left, k.right};
}

// How the classifier groups its rules (maps/policy.h). `when_needed` is what
// sluice runs: one group of dense tables unless the rules do not fit in one.
// The others are for tests, to exercise several groups and the sparse tables
// with small rule sets: `by_shape` always splits; `by_shape_sparse` also
// stores every table sparse.
enum class ClassifierGrouping { when_needed, by_shape, by_shape_sparse };

// One group of the classifier (maps/policy.h): which rules, and the sizes
// of its classes and tables, for `check`, `show` and tests.
struct ClassifierGroup {
    std::string shape;         // which rules: "all rules", or e.g. "source set, destination any"
    uint32_t rules = 0;
    // The rules of every class of the five fields (scope, source, destination,
    // destination port, source port) in this group, by class id; bit i = rule i
    // of the whole rule list.
    std::array<std::vector<std::vector<uint64_t>>, 5> field_sets;
    std::array<uint32_t, 5> field_classes{};    // scope, src, dst, dport, sport (incl. empty)
    std::array<uint32_t, 3> combined_classes{}; // after T_SCOPE_APP, T_SPORT, T_SRC_DST
    uint64_t cross_entries = 0;
    uint64_t sparse_entries = 0;
};

// The classifier's tables for one generation (maps/policy.h): policies and
// stateless filters together, told apart by their scope.
struct CompiledClassifier {
    uint8_t generation = 0;
    // Every field lookup yields the class of each group.
    std::vector<std::pair<classifier_scope_key, classifier_classes>> scopes;
    std::vector<std::pair<policy_lpm_key_v4, classifier_classes>> src_v4, dst_v4;
    std::vector<std::pair<policy_lpm_key_v6, classifier_classes>> src_v6, dst_v6;
    // POLICY_PROTO_SLOTS * 65536 entries each, slot-major.
    std::vector<classifier_classes> port_class, sport_class;
    // Groups in use and absolute positions of their tables in pol_cross (this
    // generation's half).
    classifier_layout layout{};
    // pol_cross from this generation's first entry on: every table of every
    // group, back to back.
    std::vector<uint32_t> cross;
    uint32_t cross_first = 0;
    // pol_cross_sparse: the non-empty entries of sparse tables (width 0),
    // ordered by key (group, table, left, right) for lookups in userspace.
    std::vector<std::pair<classifier_sparse_key, uint32_t>> sparse;
    // Index = result id; [0] is unused (0 = no rule).
    std::vector<classifier_result> results;
    std::vector<ClassifierGroup> groups;

    // For `check` and `show`.
    uint32_t rule_count = 0;
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
    CompiledHostInbound host_inbound;  // same generation as tables
    CompiledEgress egress;     // not generation-kept: written around the flip (loader/egress_tables.h)
    // zone_screens of the generation: SLUICE_MAX_ZONES entries, by zone id.
    std::vector<zone_screen> screens;
    policy_action default_action = POLICY_ACTION_DENY;
    std::array<uint64_t, TIMEOUT_CLASS_COUNT> timeout_ns{};
    // Flow logging (maps/observe.h): enum flow_log_flag per policy, by
    // id, and the default action's; the rate limit per CPU.
    std::vector<uint32_t> policy_log;
    uint32_t default_log = 0;
    bool flow_log = false;               // some policy (or the default) logs
    uint64_t flow_log_interval_ns = 0;   // 0: no limit
    uint64_t flow_log_tolerance_ns = 0;
};

}  // namespace sluice
