// Helpers shared by the compiler tests: load a config from text, build packets,
// read bits out of compiled tables.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "compiler/compile.h"
#include "compiler/evaluate.h"
#include "config/load_config.h"

namespace sluice::test {

inline config::Config config_from(const std::string& text) {
    auto loaded = config::parse_config(text, "test.yaml");
    for (const auto& d : loaded.diagnostics) ADD_FAILURE() << config::format_diagnostic(d);
    return loaded.ok() ? *loaded.config : config::Config{};
}

inline CompiledConfig compile_text(const std::string& text, uint8_t generation = 0) {
    auto compiled = compiler::compile(config_from(text), generation);
    if (!compiled) ADD_FAILURE() << compiled.error().message;
    return compiled ? compiled.value() : CompiledConfig{};
}

inline std::array<uint8_t, 16> address(const std::string& text) {
    return config::parse_address(text).value().addr;
}

inline compiler::PacketSpec packet(uint16_t from, uint16_t to, const std::string& src, const std::string& dst,
                                   uint8_t protocol, uint16_t port) {
    compiler::PacketSpec p;
    p.from_zone = from;
    p.to_zone = to;
    p.family = src.find(':') == std::string::npos ? config::Family::ipv4 : config::Family::ipv6;
    p.src = address(src);
    p.dst = address(dst);
    p.protocol = protocol;
    p.port = port;
    return p;
}

// The rules set in a bitset, as a list of indices (readable in failures).
inline std::vector<uint32_t> rules_in(const std::vector<uint64_t>& bits) {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < bits.size() * 64; ++i)
        if ((bits[i / 64] >> (i % 64)) & 1) out.push_back(i);
    return out;
}

// Field indexes of ClassifierGroup::field_sets.
enum Field { kScope = 0, kSource = 1, kDestination = 2, kDestinationPort = 3, kSourcePort = 4 };

// The rules a field lookup's classes stand for, in all groups together.
inline std::vector<uint32_t> class_rules(const CompiledClassifier& t, Field field, const classifier_classes& c) {
    std::vector<uint32_t> out;
    for (size_t g = 0; g < t.groups.size(); ++g) {
        auto in_group = rules_in(t.groups[g].field_sets[field].at(c.group[g]));
        out.insert(out.end(), in_group.begin(), in_group.end());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// No rule of any group.
inline bool no_class(const classifier_classes& c) {
    for (uint32_t cls : c.group)
        if (cls) return false;
    return true;
}

// Rules allowed for (slot, destination port) by the port-class tables.
inline std::vector<uint32_t> app_rules(const CompiledClassifier& t, int slot, uint16_t port) {
    return class_rules(t, kDestinationPort, t.port_class.at(static_cast<size_t>(slot) * POLICY_PORTS + port));
}

}  // namespace sluice::test
