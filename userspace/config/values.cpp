#include "config/values.h"

#include <charconv>
#include <limits>

namespace sluice::config {
namespace {

// Parses a whole string as an unsigned decimal number; nothing else allowed.
template <typename T>
bool parse_unsigned(std::string_view text, T& out) {
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

Result<PortRange> parse_port_range(std::string_view text) {
    const std::string quoted = "\"" + std::string(text) + "\"";
    auto dash = text.find('-');
    uint32_t lo = 0, hi = 0;
    bool ok = dash == std::string_view::npos
                  ? parse_unsigned(text, lo) && ((hi = lo), true)
                  : parse_unsigned(text.substr(0, dash), lo) &&
                        parse_unsigned(text.substr(dash + 1), hi);
    if (!ok) return make_error("invalid port " + quoted + " (expected 80 or 1024-65535)");
    if (lo > 65535 || hi > 65535) return make_error("port " + quoted + " out of range 0-65535");
    if (lo > hi) return make_error("port range " + quoted + " is reversed (low > high)");
    return PortRange{static_cast<uint16_t>(lo), static_cast<uint16_t>(hi)};
}

Result<uint8_t> parse_protocol(std::string_view text) {
    if (text == "tcp") return kProtoTcp;
    if (text == "udp") return kProtoUdp;
    if (text == "icmp") return kProtoIcmp;
    if (text == "icmpv6") return kProtoIcmpv6;
    unsigned number = 0;
    if (parse_unsigned(text, number) && number <= 255) return static_cast<uint8_t>(number);
    return make_error("invalid protocol \"" + std::string(text) +
                      "\" (expected tcp, udp, icmp, icmpv6 or a number 0-255)");
}

std::string protocol_name(uint8_t protocol) {
    switch (protocol) {
    case kProtoTcp: return "tcp";
    case kProtoUdp: return "udp";
    case kProtoIcmp: return "icmp";
    case kProtoIcmpv6: return "icmpv6";
    default: return std::to_string(protocol);
    }
}

Result<std::chrono::seconds> parse_duration(std::string_view text) {
    const auto bad = make_error("invalid duration \"" + std::string(text) +
                                "\" (expected a positive number with s, m or h, e.g. 30s, 5m, 2h)");
    if (text.size() < 2) return bad;
    uint64_t count = 0;
    if (!parse_unsigned(text.substr(0, text.size() - 1), count) || count == 0) return bad;
    uint64_t unit = 0;
    switch (text.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    default: return bad;
    }
    // Durations become nanoseconds in a u64 map field; keep them far below overflow.
    constexpr uint64_t max_seconds = 10ull * 365 * 24 * 3600;
    if (count > max_seconds / unit) return make_error("duration \"" + std::string(text) + "\" is too long (at most 10 years)");
    return std::chrono::seconds(count * unit);
}

Result<std::chrono::milliseconds> parse_duration_ms(std::string_view text) {
    const auto bad = make_error("invalid interval \"" + std::string(text) +
                                "\" (expected a positive number with ms or s, e.g. 20ms, 1s)");
    uint64_t count = 0, factor = 0;
    if (text.size() > 2 && text.ends_with("ms")) {
        factor = 1;
        text.remove_suffix(2);
    } else if (text.size() > 1 && text.ends_with("s")) {
        factor = 1000;
        text.remove_suffix(1);
    } else {
        return bad;
    }
    if (!parse_unsigned(text, count) || count == 0) return bad;
    if (count > 60000 / factor) return make_error("interval \"" + std::string(text) + (factor == 1 ? "ms" : "s") +
                                                  "\" is too long (at most 60s)");
    return std::chrono::milliseconds(count * factor);
}

Result<uint64_t> parse_size(std::string_view text) {
    struct Unit { std::string_view suffix; uint64_t factor; };
    static constexpr Unit units[] = {{"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
                                     {"kB", 1000},       {"MB", 1000000},     {"GB", 1000000000},
                                     {"B", 1}};
    uint64_t factor = 1;
    std::string_view digits = text;
    for (const auto& u : units) {
        if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
            factor = u.factor;
            digits = text.substr(0, text.size() - u.suffix.size());
            break;
        }
    }
    uint64_t count = 0;
    if (!parse_unsigned(digits, count) || count == 0 ||
        count > std::numeric_limits<uint64_t>::max() / factor) {
        return make_error("invalid size \"" + std::string(text) +
                          "\" (expected a positive byte count like 65536, 64KiB or 1MiB)");
    }
    return count * factor;
}

}  // namespace sluice::config
