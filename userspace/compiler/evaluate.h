// Two ways to find the policy for a first packet, for tests and for
// `show`-style tooling: the compiled tables read exactly as the BPF program
// reads them, and a plain first-match scan of the config. They must agree.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/compiled_config.h"
#include "config/config.h"

namespace sluice::compiler {

struct PacketSpec {
    uint16_t from_zone = 0, to_zone = 0;   // zone ids (1-based, config order)
    config::Family family = config::Family::ipv4;
    std::array<uint8_t, 16> src{}, dst{};  // network order; IPv4 in the first 4 bytes
    uint8_t protocol = 0;                  // IP protocol number
    uint16_t port = 0;                     // TCP/UDP destination port, or ICMP/ICMPv6 type
    uint16_t source_port = 0;              // TCP/UDP source port
};

// Protocol slot and "port" of a packet, as the BPF program derives them.
std::pair<policy_proto_slot, uint16_t> proto_slot(uint8_t protocol, uint16_t port);

// What a packet matched in a scope, with the groups' results merged as the
// BPF program merges them.
struct ClassifierMatch {
    uint32_t rule = CLASSIFIER_NO_RULE;   // deciding rule, or none (only `count` rules matched)
    uint8_t action = 0;                   // enum policy_action / enum filter_action
    uint16_t ruleset_id = 0;
    std::vector<uint32_t> counted;        // filter rule slots the packet counts for, ascending
};

// Classification through the compiled tables, lookup for lookup as the BPF
// program does it: the match in a scope (nullopt = no rule matched).
std::optional<ClassifierMatch> classify_tables(const CompiledClassifier& tables, classifier_scope_kind kind,
                                               uint16_t a, uint16_t b, const PacketSpec& packet);

// The policy a first packet gets through the tables: its index, if any.
std::optional<uint32_t> classify_tables(const CompiledClassifier& tables, const PacketSpec& packet);

// Reference: the first policy in file order that matches, evaluated directly on
// the config (address-book and application names looked up, no tables).
std::optional<uint32_t> classify_linear(const config::Config& config, const PacketSpec& packet);

}  // namespace sluice::compiler
