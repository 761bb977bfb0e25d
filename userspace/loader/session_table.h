// Reading and expiring the session maps from userspace: one batched dump per
// family (the kernel walks the buckets, we never do), flows assembled from
// their two direction entries.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

// One direction entry, family-neutral (IPv4 addresses in word 0).
struct SessionEntry {
    uint8_t family = SLUICE_FAMILY_IPV4;
    uint8_t protocol = 0;
    uint32_t src_addr[4] = {};   // network order
    uint32_t dst_addr[4] = {};
    uint16_t src_port = 0;       // network order
    uint16_t dst_port = 0;
    session_value value{};
};

// expected: entries to make room for at once (a caller that dumps again and
// again passes what it saw last, rather than regrowing the vector each time).
Result<std::vector<SessionEntry>> dump_sessions(int fd_v4, int fd_v6, size_t expected = 0);

// Whether the entry rewrites its packets (value.nat is valid).
bool has_translation(const session_value& v);
// The tuple packets of e's direction leave with: e's key rewritten by its
// translation, or e's key unchanged when it has none (maps/nat.h).
SessionEntry translated_tuple(const SessionEntry& e);
// The key of e's other direction: the reverse of e's translated tuple
// (for an untranslated flow simply the reverse tuple).
SessionEntry reverse_of(const SessionEntry& e);
bool same_key(const SessionEntry& a, const SessionEntry& b);
// The entry's key as bytes (family, protocol, ports, addresses), for
// indexing: a fixed size, so building one allocates nothing (the GC builds
// two per session on every walk).
using SessionKeyBytes = std::array<uint8_t, 38>;
SessionKeyBytes key_bytes(const SessionEntry& e);
struct SessionKeyHash {
    size_t operator()(const SessionKeyBytes& k) const noexcept;
};

Status delete_session_entry(int fd_v4, int fd_v6, const SessionEntry& e);
// The same for many entries, a BPF_MAP_DELETE_BATCH per family (one syscall
// per few thousand entries, not one each); entries already gone are skipped.
Status delete_session_entries(int fd_v4, int fd_v6, const std::vector<const SessionEntry*>& entries);
// Fills e.value from the map entry keyed by e's tuple; false when absent.
bool read_session_entry(int fd_v4, int fd_v6, SessionEntry& e);
// Overwrites an existing entry with e.value (the datapath's counters of the
// moment in between are lost, which is fine for rare control writes).
Status update_session_entry(int fd_v4, int fd_v6, const SessionEntry& e);
// Creates or overwrites the entry (the HA standby writing a synced flow).
Status write_session_entry(int fd_v4, int fd_v6, const SessionEntry& e);

// Timeout class for an entry (state and protocol).
int timeout_class_of(const session_value& v, uint8_t protocol);

// Monotonic coarse clock, the one bpf_ktime_get_coarse_ns() reads.
uint64_t coarse_now_ns();

std::string tcp_state_name(uint8_t state);
std::string protocol_name(uint8_t protocol);
std::string address_text(uint8_t family, const uint32_t addr[4]);
// "198.18.1.10:40000" or "[2001:2:0:1::10]:40000"; port in network order.
std::string endpoint_text(uint8_t family, const uint32_t addr[4], uint16_t port);

}  // namespace sluice
