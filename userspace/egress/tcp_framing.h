// DNS over TCP frames each message with its length, two bytes in network
// order (RFC 1035 4.2.2, RFC 7766): the proxy's TCP clients and its TCP
// attempts upstream read and write them the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace sluice::egress {

// The message with its length in front (a DNS message is at most 65,535 bytes).
std::vector<uint8_t> frame_message(const std::vector<uint8_t>& message);

// Collects a byte stream and hands out each complete message.
class FrameReader {
public:
    void append(const uint8_t* data, size_t size) { buffer_.insert(buffer_.end(), data, data + size); }
    // The next complete message, without its length; none until it is all there.
    std::optional<std::vector<uint8_t>> next();
    size_t buffered() const { return buffer_.size() - start_; }
    // A complete message is waiting (next() would return it).
    bool ready() const;

private:
    std::vector<uint8_t> buffer_;
    size_t start_ = 0;  // consumed bytes at the front, dropped once all are consumed
};

}  // namespace sluice::egress
