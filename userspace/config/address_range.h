// Inclusive address ranges, as NAT pools list them: "198.18.100.10-198.18.100.20",
// a prefix (its whole range) or one address. A pool range counts up in one
// 32-bit word (maps/nat.h nat_pool_range), so the helpers here say whether a
// range fits that word and how many addresses it holds.
#pragma once

#include <cstdint>
#include <string>

#include "config/diagnostics.h"
#include "config/prefix.h"

namespace sluice::config {

struct AddressRange {
    Prefix first, last;     // host prefixes of the same family
    std::string text = {};  // as written, for messages
    Location location = {};
    std::string path = {};  // e.g. "nat.pools.public.addresses[0]"
};

// Every address of a prefix, as a range of host prefixes.
AddressRange range_of(const Prefix& prefix);

bool overlaps(const AddressRange& a, const AddressRange& b);

// The word a pool range counts up in: IPv4 word 0, IPv6 word 3 (host order).
uint32_t counting_word(const Prefix& address);

// True when both ends differ only in the counting word (always for IPv4).
bool fits_one_word(const AddressRange& range);

// Addresses in the range (1 to 2^32); only meaningful when fits_one_word().
uint64_t address_count(const AddressRange& range);

// A pool family holds at most this many addresses (nat_pool.address_count
// is 32 bits), so a whole /96 (2^32) is one too many.
inline constexpr uint64_t kMaxPoolAddresses = UINT32_MAX;

}  // namespace sluice::config
