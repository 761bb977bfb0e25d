// A policy with every name resolved: zone ids, the prefixes of its source and
// destination per family, and the (protocol slot, port range)s of its
// applications. This is what the table builders consume.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.h"
#include "compiler/compiled_config.h"

namespace sluice::compiler {

struct PrefixSet {
    bool any = false;                     // matches every address of both families
    std::vector<config::Prefix> prefixes; // IPv4 and IPv6 mixed
};

struct SlotRange {
    policy_proto_slot slot;
    uint16_t lo, hi;
};

struct AppSet {
    bool any = false;                     // every protocol and port
    std::vector<SlotRange> ranges;
};

struct ResolvedRule {
    uint16_t from_zone = 0, to_zone = 0;
    PrefixSet source, destination;
    AppSet applications;
    policy_action action = POLICY_ACTION_DENY;
    uint16_t ruleset_id = 0;
};

// ICMP "ports" are message types; `protocol: icmp` means echo (docs/config.md),
// which is type 8 in ICMP and type 128 in ICMPv6.
inline constexpr uint16_t kIcmpEchoRequest = 8;
inline constexpr uint16_t kIcmpv6EchoRequest = 128;

// Fails only on a Config that did not pass validation (unknown names).
Result<std::vector<ResolvedRule>> resolve_rules(const config::Config& config);

// The prefixes of a source/destination field, address-book names expanded.
Result<PrefixSet> resolve_addresses(const config::Config& config, const config::AddressMatch& match);

// 1-based zone id of a zone name in file order, 0 if unknown.
uint16_t zone_id(const config::Config& config, const std::string& name);

policy_action to_policy_action(config::PolicyAction action);

}  // namespace sluice::compiler
