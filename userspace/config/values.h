// Scalar value syntaxes of the config: port sets, protocols, durations, sizes.
// Each parser returns the value or an Error whose message says what is
// accepted; the caller adds file, line and path.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::config {

struct PortRange {
    uint16_t lo = 0;
    uint16_t hi = 0;
    auto operator<=>(const PortRange&) const = default;
};

// "80" or "1024-65535" (0-65535, lo <= hi).
Result<PortRange> parse_port_range(std::string_view text);

inline constexpr uint8_t kProtoIcmp = 1;
inline constexpr uint8_t kProtoTcp = 6;
inline constexpr uint8_t kProtoUdp = 17;
inline constexpr uint8_t kProtoIcmpv6 = 58;

// "tcp" | "udp" | "icmp" | "icmpv6" | a number 0-255.
Result<uint8_t> parse_protocol(std::string_view text);
std::string protocol_name(uint8_t protocol);

// "30s", "5m", "2h"; must be positive.
Result<std::chrono::seconds> parse_duration(std::string_view text);

// "20ms", "1s": a short interval (heartbeats); positive, at most 60s.
Result<std::chrono::milliseconds> parse_duration_ms(std::string_view text);

// A byte count: "65536", "64KiB", "1MiB", "1GiB" (also kB/MB/GB as powers of 1000).
Result<uint64_t> parse_size(std::string_view text);

}  // namespace sluice::config
