#include "egress/tcp_framing.h"

namespace sluice::egress {

std::vector<uint8_t> frame_message(const std::vector<uint8_t>& message) {
    std::vector<uint8_t> out;
    out.reserve(message.size() + 2);
    out.push_back(static_cast<uint8_t>(message.size() >> 8));
    out.push_back(static_cast<uint8_t>(message.size() & 0xff));
    out.insert(out.end(), message.begin(), message.end());
    return out;
}

bool FrameReader::ready() const {
    if (buffered() < 2) return false;
    const size_t length = (size_t{buffer_[start_]} << 8) | buffer_[start_ + 1];
    return buffered() >= 2 + length;
}

std::optional<std::vector<uint8_t>> FrameReader::next() {
    if (!ready()) return std::nullopt;
    const size_t length = (size_t{buffer_[start_]} << 8) | buffer_[start_ + 1];
    std::vector<uint8_t> message(buffer_.begin() + static_cast<std::ptrdiff_t>(start_ + 2),
                                 buffer_.begin() + static_cast<std::ptrdiff_t>(start_ + 2 + length));
    start_ += 2 + length;
    if (start_ == buffer_.size()) {
        buffer_.clear();
        start_ = 0;
    }
    return message;
}

}  // namespace sluice::egress
