// `perf report --no-children --sort=symbol --stdio` read into a symbol table.
// BPF programs appear in kallsyms as `bpf_prog_<tag>_<name>`; they are shown
// by their program name (the tag changes with every build), and entries that
// share a shown name (the same program loaded twice) are added together.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::perftest {

struct ProfileEntry {
    std::string symbol;     // what the profile calls it: a program name for BPF
    std::string raw;        // as perf printed it (bpf_prog_<tag>_<name>, [k] foo, ...)
    double percent = 0;     // self overhead, percent of all samples
    bool bpf = false;       // a BPF program
    char space = '?';       // 'k' kernel, '.' user space, as perf marks it
};

struct Profile {
    std::vector<ProfileEntry> entries;   // highest percent first
    long long samples = 0;               // "# Samples: 12K of event ..." (0 if not given)
    std::string event;                   // "cpu-clock" etc.

    // The entry whose shown name is `symbol`, if any.
    const ProfileEntry* find(std::string_view symbol) const;
    // Percent of `symbol`; 0 when it does not appear.
    double percent(std::string_view symbol) const;
};

// "bpf_prog_6deef7357e7b4530_xdp_main_prog" -> "xdp_main_prog"; nullopt when
// `symbol` is not a BPF program symbol.
std::optional<std::string> bpf_program_name(std::string_view symbol);

// Parses the stdio report. Call-graph lines are skipped; an output with no
// symbol line at all (perf's "no samples" or an error) is an Error.
Result<Profile> parse_perf_report(const std::string& text);

}  // namespace sluice::perftest
