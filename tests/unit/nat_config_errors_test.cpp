// NAT limits of the maps (maps/nat.h), reported by `check` at the list that
// exceeds them; the fixtures in tests/data/configs/bad-nat-*.yaml cover the
// other NAT checks (config_errors_test.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/load_config.h"

extern "C" {
#include "nat.h"
}

using namespace sluice::config;

namespace {

const std::string kHeader = "interfaces: { lan0: { zone: z } }\nzones: { z: {} }\nnat:\n";

std::vector<std::string> errors_of_text(const std::string& text) {
    std::vector<std::string> lines;
    for (const auto& d : parse_config(text, "fw.yaml").diagnostics) lines.push_back(format_diagnostic(d));
    return lines;
}

// `count` pools of one distinct address each.
std::string pools(int count) {
    std::string text = "  pools:\n";
    for (int i = 0; i < count; ++i)
        text += "    p" + std::to_string(i) + ": { addresses: 198.18." + std::to_string(100 + i / 200) + "." +
                std::to_string(1 + i % 200) + " }\n";
    return text;
}

std::string source_rules(int count) {
    std::string text = "  source:\n";
    for (int i = 0; i < count; ++i)
        text += "    - { name: s" + std::to_string(i) + ", from: z, to: z, translate: interface }\n";
    return text;
}

std::string destination_rules(int count) {
    std::string text = "  destination:\n";
    for (int i = 0; i < count; ++i)
        text += "    - { name: d" + std::to_string(i) + ", from: z, destination: 198.18." + std::to_string(i / 250) +
                "." + std::to_string(1 + i % 250) + ", translate-to: { address: 198.19.0.1 } }\n";
    return text;
}

std::string static_rules(int count) {
    std::string text = "  static:\n";
    for (int i = 0; i < count; ++i) {
        const std::string host = std::to_string(i / 250) + "." + std::to_string(1 + i % 250);
        text += "    - { inside: 198.18." + host + ", outside: 198.19." + host + " }\n";
    }
    return text;
}

}  // namespace

TEST(NatConfigErrors, AtTheLimitsIsFine) {
    EXPECT_EQ(errors_of_text(kHeader + pools(NAT_MAX_POOLS) + source_rules(NAT_MAX_SOURCE_RULES)),
              std::vector<std::string>{});
}

TEST(NatConfigErrors, TooManyPools) {
    EXPECT_EQ(errors_of_text(kHeader + pools(NAT_MAX_POOLS + 1)),
              std::vector<std::string>{"fw.yaml:5:5: nat.pools: too many pools: 65 (at most 64)"});
}

TEST(NatConfigErrors, TooManySourceRules) {
    EXPECT_EQ(errors_of_text(kHeader + source_rules(NAT_MAX_SOURCE_RULES + 1)),
              std::vector<std::string>{"fw.yaml:5:5: nat.source: too many source rules: 65 (at most 64)"});
}

TEST(NatConfigErrors, TooManyDestinationRules) {
    EXPECT_EQ(errors_of_text(kHeader + destination_rules(NAT_MAX_DESTINATION_RULES)), std::vector<std::string>{});
    EXPECT_EQ(
        errors_of_text(kHeader + destination_rules(NAT_MAX_DESTINATION_RULES + 1)),
        std::vector<std::string>{"fw.yaml:5:5: nat.destination: too many destination rules: 4097 (at most 4096)"});
}

TEST(NatConfigErrors, TooManyStaticRules) {
    EXPECT_EQ(
        errors_of_text(kHeader + static_rules(NAT_MAX_PREFIX_RULES + 1)),
        std::vector<std::string>{"fw.yaml:5:5: nat.static: too many static and nptv6 rules: 4097 (at most 4096)"});
}
