// A profile held against the expectations in profiles/<env>.yaml: for each
// symbol a healthy range of CPU percent, a red-flag threshold and what the
// symbol's time means. A symbol missing from the profile is at 0%.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "perftest/perf_report.h"

namespace sluice::perftest {

struct SymbolExpectation {
    std::string symbol;        // as the profile shows it (a BPF program by name)
    double healthy_min = 0;    // percent
    double healthy_max = 0;    // percent
    double red_flag = 0;       // above this, something is wrong
    std::string meaning;
};

struct ProfileExpectations {
    std::string environment;
    std::string source;        // where the numbers come from (free text from the file)
    std::vector<SymbolExpectation> symbols;
};

// Parses a profiles/<env>.yaml text. `origin` names it in error messages.
//   environment: netns
//   source: "..."
//   symbols:
//     - { symbol: xdp_main_prog, healthy: [9, 14], red-flag: 20, meaning: "..." }
Result<ProfileExpectations> parse_profile_expectations(const std::string& yaml_text, const std::string& origin);
Result<ProfileExpectations> load_profile_expectations(const std::string& path);

enum class SymbolStatus { ok, low, high, red_flag, absent };
const char* to_string(SymbolStatus status);   // "ok", "low", "high", "red-flag", "absent"

struct SymbolReview {
    SymbolExpectation expected;
    double percent = 0;     // 0 when absent
    bool present = false;
    SymbolStatus status = SymbolStatus::absent;
};

// Status of one symbol: above red-flag -> red-flag; absent -> ok when the
// healthy range starts at 0 (bpf_printk must be at 0%), else absent; below the
// range -> low; above it -> high; else ok.
SymbolStatus classify(const SymbolExpectation& expected, std::optional<double> percent);

std::vector<SymbolReview> review_profile(const Profile& profile, const ProfileExpectations& expectations);

// True when any symbol is red-flag.
bool any_red_flag(const std::vector<SymbolReview>& reviews);

}  // namespace sluice::perftest
