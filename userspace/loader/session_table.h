// Reading and expiring the session maps from userspace: one batched dump per
// family (the kernel walks the buckets, we never do), flows assembled from
// their two direction entries.
#pragma once

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

Result<std::vector<SessionEntry>> dump_sessions(int fd_v4, int fd_v6);

// The entry keyed by the reverse tuple of e (where its other direction lives).
SessionEntry reverse_of(const SessionEntry& e);
bool same_key(const SessionEntry& a, const SessionEntry& b);
// The entry's key as bytes (family, protocol, ports, addresses), for indexing.
std::string key_bytes(const SessionEntry& e);

Status delete_session_entry(int fd_v4, int fd_v6, const SessionEntry& e);

// Timeout class for an entry (state and protocol).
int timeout_class_of(const session_value& v, uint8_t protocol);

// Monotonic coarse clock, the one bpf_ktime_get_coarse_ns() reads.
uint64_t coarse_now_ns();

std::string tcp_state_name(uint8_t state);
std::string protocol_name(uint8_t protocol);
std::string address_text(uint8_t family, const uint32_t addr[4]);

}  // namespace sluice
