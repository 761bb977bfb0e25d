// Reading the datapath's maps from tests: the per-CPU stats counters (summed
// over CPUs, with names and kinds from the maps/stats.h X-macro) and sessions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "packet_builder.h"

extern "C" {
#include "runtime_config.h"
#include "screen.h"
#include "session.h"
#include "stats.h"
}

namespace sluice::test {

struct StatInfo {
    int id;
    const char* enum_name;  // "STAT_DROP_POLICY_DENY"
    const char* name;       // "drop-policy-deny"
    const char* kind;       // "drop" | "pass" | "info"
};
const std::vector<StatInfo>& stat_table();

// One value of a per-CPU map as u64 words (value_size / 8 of them), each
// summed over all possible CPUs: a counter struct such as filter_rule_counter.
Result<std::vector<uint64_t>> read_percpu_sums(int map_fd, uint32_t key, size_t value_size);

// screen_hits of the zone in the active generation, summed over CPUs
// (maps/screen.h); a failed read fails the calling test and gives zeros.
screen_counter read_screen_counter(int screen_hits_fd, int runtime_cfg_fd, uint16_t zone);

// stats[reason], summed over all possible CPUs (the first u64 of each value).
Result<std::vector<uint64_t>> read_stats(int stats_map_fd);

// after - before, for the reasons that changed.
std::map<int, int64_t> stat_delta(const std::vector<uint64_t>& before, const std::vector<uint64_t>& after);

// Readable "drop-policy-deny +1, rx +1".
std::string describe_delta(const std::map<int, int64_t>& delta);

// Session keys as the datapath builds them (see maps/session.h).
session_key_v4 session_key(const Ipv4Addr& src, const Ipv4Addr& dst, uint16_t sport, uint16_t dport,
                           uint8_t protocol);
session_key_v6 session_key(const Ipv6Addr& src, const Ipv6Addr& dst, uint16_t sport, uint16_t dport,
                           uint8_t protocol);

std::optional<session_value> lookup_session(int map_fd, const session_key_v4& key);
std::optional<session_value> lookup_session(int map_fd, const session_key_v6& key);

// Number of entries in a hash map (walks the keys).
size_t count_entries(int map_fd);

// Removes every entry of a hash map (between fixtures that must not share state).
void clear_map(int map_fd);

}  // namespace sluice::test
