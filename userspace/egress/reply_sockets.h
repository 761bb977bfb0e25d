// Transparent mode: a client asked its resolver (say 198.18.53.1:53), the
// datapath steered the datagram to the proxy, and the answer must come back
// from 198.18.53.1:53 or the client drops it. These are UDP sockets bound to
// such original destinations (IP_TRANSPARENT, SO_REUSEADDR), one per
// destination, kept: a client population talks to a handful of resolvers.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>

#include "common/result.h"
#include "inspect/sockets.h"

namespace sluice::egress {

class ReplySockets {
public:
    ReplySockets() = default;
    ~ReplySockets() { close_all(); }
    ReplySockets(const ReplySockets&) = delete;
    ReplySockets& operator=(const ReplySockets&) = delete;

    // Sends `message` to `to` from `from` (opening the socket for `from` when
    // there is none yet).
    Status send(const inspect::Endpoint& from, const inspect::Endpoint& to, std::span<const uint8_t> message);
    void close_all();
    size_t size() const { return sockets_.size(); }

private:
    using Key = std::tuple<int, std::array<uint32_t, 4>, uint16_t>;
    std::map<Key, int> sockets_;
};

}  // namespace sluice::egress
