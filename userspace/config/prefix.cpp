#include "config/prefix.h"

#include <arpa/inet.h>

#include <charconv>

namespace sluice::config {

std::array<uint8_t, 16> mask_address(const std::array<uint8_t, 16>& addr, int length) {
    std::array<uint8_t, 16> out{};
    for (int i = 0; i < 16; ++i) {
        int bits = std::min(8, std::max(0, length - i * 8));
        out[i] = bits == 0 ? 0 : static_cast<uint8_t>(addr[i] & (0xff << (8 - bits)));
    }
    return out;
}

bool Prefix::contains_address(Family f, const std::array<uint8_t, 16>& address) const {
    return f == family && mask_address(address, length) == addr;
}

bool Prefix::contains(const Prefix& other) const {
    return other.family == family && other.length >= length &&
           mask_address(other.addr, length) == addr;
}

std::string Prefix::to_string() const {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family == Family::ipv4 ? AF_INET : AF_INET6, addr.data(), buf, sizeof buf);
    return std::string(buf) + "/" + std::to_string(length);
}

Result<Prefix> parse_address(std::string_view text) {
    std::string s(text);
    Prefix p;
    if (s.find(':') != std::string::npos) {
        if (inet_pton(AF_INET6, s.c_str(), p.addr.data()) != 1)
            return make_error("invalid IPv6 address \"" + s + "\"");
        p.family = Family::ipv6;
        p.length = 128;
    } else {
        if (inet_pton(AF_INET, s.c_str(), p.addr.data()) != 1)
            return make_error("invalid IPv4 address \"" + s + "\"");
        p.family = Family::ipv4;
        p.length = 32;
    }
    return p;
}

Result<Prefix> parse_prefix(std::string_view text) {
    auto slash = text.find('/');
    auto address = parse_address(text.substr(0, slash));
    if (!address) return address.error();
    if (slash == std::string_view::npos) return address;

    Prefix p = address.value();
    std::string_view len_text = text.substr(slash + 1);
    unsigned length = 0;
    auto [end, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), length);
    if (len_text.empty() || ec != std::errc{} || end != len_text.data() + len_text.size() ||
        length > static_cast<unsigned>(p.max_length())) {
        return make_error("invalid prefix length in \"" + std::string(text) + "\" (0-" +
                          std::to_string(p.max_length()) + ")");
    }
    p.length = static_cast<uint8_t>(length);
    auto masked = mask_address(p.addr, p.length);
    if (masked != p.addr) {
        Prefix fixed = p;
        fixed.addr = masked;
        return make_error("prefix \"" + std::string(text) + "\" has host bits set (did you mean \"" +
                          fixed.to_string() + "\"?)");
    }
    return p;
}

bool looks_like_address(std::string_view text) {
    if (text.find(':') != std::string_view::npos) return true;
    if (text.empty()) return false;
    for (char c : text)
        if (!((c >= '0' && c <= '9') || c == '.' || c == '/')) return false;
    return true;
}

}  // namespace sluice::config
