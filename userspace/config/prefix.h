// IPv4/IPv6 prefixes as written in the config: "198.18.1.0/24",
// "2001:2:0:1::/64", or a bare address meaning one host.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::config {

enum class Family : uint8_t { ipv4 = 4, ipv6 = 6 };

struct Prefix {
    Family family = Family::ipv4;
    std::array<uint8_t, 16> addr{};  // network order; IPv4 uses the first 4 bytes
    uint8_t length = 0;              // prefix bits

    int max_length() const { return family == Family::ipv4 ? 32 : 128; }
    // True when `other` lies inside this prefix (same family, at least as long).
    bool contains(const Prefix& other) const;
    bool contains_address(Family f, const std::array<uint8_t, 16>& address) const;
    std::string to_string() const;
    auto operator<=>(const Prefix&) const = default;
};

// Parses a prefix; host bits set after the length is an error (it usually means
// a typo in the length or the address), and the message names the fix.
Result<Prefix> parse_prefix(std::string_view text);

// Parses a single address (no length); the result is a host prefix.
Result<Prefix> parse_address(std::string_view text);

// True when text is shaped like an address literal (digits and dots, or a colon)
// rather than a name, so "198.18.1.300" is reported as a bad address, not an
// unknown address-book name.
bool looks_like_address(std::string_view text);

// Clears every bit after the first `length` bits.
std::array<uint8_t, 16> mask_address(const std::array<uint8_t, 16>& addr, int length);

}  // namespace sluice::config
