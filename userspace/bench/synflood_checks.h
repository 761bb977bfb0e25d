// The arithmetic and the in-path checks of `sluice bench synflood`, apart
// from the lab so they can be tested on synthetic inputs: which systems
// exist, the CPU shares (proc_stat.h), the packet rates from `ip -j -s
// link`, the session table from `sluice show sessions --json`, and the
// checks that fail a run whose system was not in the path.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/proc_stat.h"
#include "common/result.h"

namespace sluice::bench {

// none, sluice, sluice-proxy, sluice-auto, nft-ct, nft-synproxy (the default order).
const std::vector<std::string>& synflood_systems();
bool is_sluice_system(const std::string& system);
bool is_nft_system(const std::string& system);
// "none sluice" or "none,sluice" -> the names, each checked against
// synflood_systems(); an Error names an unknown one. Empty is an Error too.
Result<std::vector<std::string>> parse_systems(const std::string& text);

// stats64.rx.packets of the (first) link in `ip -j -s link show DEV`.
Result<uint64_t> rx_packets_of(const std::string& ip_json);
// address of the (first) link in `ip -j link show DEV`.
Result<std::string> mac_of(const std::string& ip_json);

// Packets an interface received over a window.
struct PacketWindow {
    uint64_t packets = 0;
    double seconds = 0;
    double rate() const { return seconds > 0 ? static_cast<double>(packets) / seconds : 0; }
};
// The flood is there when the firewall received well over what the
// connections alone bring: this many packets per second more.
inline constexpr double kFloodMargin = 20000;

// How long every system keeps a closed TCP flow (sluice: timeouts.tcp-time-wait;
// nftables: nf_conntrack_tcp_timeout_time_wait). ~10 k conn/s for the
// seconds of a measurement would otherwise hold 10 k flows per second for
// the default 2 min and fill sluice's default table (131,072) from the
// legitimate connections alone within ~12 s: the same short value for all,
// so the flood, not the connections' own flows, is what is measured.
inline constexpr int kBenchTimeWaitSeconds = 5;
inline constexpr const char* kBenchTimeWait = "5s";
// SYNs per second at the firewall: what arrived beyond the connections' own
// packets (rate with the flood minus rate without), rounded.
double syn_rate(const PacketWindow& without_flood, const PacketWindow& with_flood);
Status check_flood_reached(const std::string& system, const PacketWindow& without_flood,
                           const PacketWindow& with_flood);

// What proves a system was in the path during the flood.
struct InPathEvidence {
    uint64_t cookies_before = 0;  // syn-proxy-cookie-sent before the flood
    uint64_t cookies_after = 0;   // and after it
    uint64_t session_hits = 0;    // session-hit since sluice started
    uint64_t nft_packets = 0;     // every counter of the nft table
};
// sluice-proxy: cookies were sent during the flood; sluice, sluice-auto:
// packets hit sessions; nft-*: the table's counters moved; none: nothing to
// prove here (no XDP program is checked separately).
Status check_in_path(const std::string& system, const InPathEvidence& evidence);

// Flows in the firewall's table after the flood.
struct TableSize {
    uint64_t spoofed = 0;  // from the spoofed sources
    uint64_t all = 0;
};
// From `sluice show sessions --json`: sources starting with `spoofed_prefix`.
Result<TableSize> sluice_table_size(const nlohmann::json& show_sessions, const std::string& spoofed_prefix = "198.19.");

// A measurement must not be decided by the table filling with the
// legitimate connections' own closed flows: sluice-proxy and sluice-auto
// (no spoofed SYN takes a session) and part (b) fail when
// drop-session-table-full moved during the measurement. `what` names it.
Status check_table_not_full(const std::string& what, uint64_t table_full_drops);

// Part (b): with the source limit on, it must have refused something.
Status check_source_limit(bool limit_on, uint64_t refused);

}  // namespace sluice::bench
