#include "config/address_range.h"

#include <algorithm>

namespace sluice::config {

AddressRange range_of(const Prefix& prefix) {
    AddressRange range{prefix, prefix};
    range.first.length = range.last.length = static_cast<uint8_t>(prefix.max_length());
    for (int bit = prefix.length; bit < prefix.max_length(); ++bit)
        range.last.addr[bit / 8] |= static_cast<uint8_t>(0x80 >> (bit % 8));
    range.text = prefix.to_string();
    return range;
}

bool overlaps(const AddressRange& a, const AddressRange& b) {
    // Addresses of one family compare as byte strings (IPv4 pads with zeros).
    return a.first.family == b.first.family &&
           std::max(a.first.addr, b.first.addr) <= std::min(a.last.addr, b.last.addr);
}

uint32_t counting_word(const Prefix& address) {
    const size_t at = address.family == Family::ipv4 ? 0 : 12;
    return uint32_t{address.addr[at]} << 24 | uint32_t{address.addr[at + 1]} << 16 |
           uint32_t{address.addr[at + 2]} << 8 | address.addr[at + 3];
}

bool fits_one_word(const AddressRange& range) {
    return range.first.family == Family::ipv4 ||
           std::equal(range.first.addr.begin(), range.first.addr.begin() + 12, range.last.addr.begin());
}

uint64_t address_count(const AddressRange& range) {
    return uint64_t{counting_word(range.last)} - counting_word(range.first) + 1;
}

}  // namespace sluice::config
