// The fabric's UDP socket (docs/ha.md "Messages"): bound to this node's
// fabric address and the fabric interface; it sends to the peer's fabric
// address and port and hands on only datagrams from there, so nothing but
// the peer reaches the agent, whatever else host-inbound lets through to the
// port. (Not a connected socket: connect() fails while the fabric's link is
// down, and a node must start with its links down.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/ha_config.h"

#include <sys/socket.h>

namespace sluice::ha {

// Larger than any valid datagram, so a too-long one arrives whole and is refused by its length.
inline constexpr size_t kMaxDatagramReceive = 2048;

class FabricSocket {
public:
    static Result<std::unique_ptr<FabricSocket>> open(const std::string& interface, const config::HaAddress& self,
                                                      const config::HaAddress& peer, uint16_t port);
    ~FabricSocket();
    FabricSocket(const FabricSocket&) = delete;
    FabricSocket& operator=(const FabricSocket&) = delete;

    int fd() const { return fd_; }
    // false when the datagram could not be queued (the errno is in last_errno()).
    bool send(const std::vector<uint8_t>& datagram);
    // One datagram, or an empty vector when none is queued.
    std::vector<uint8_t> receive();
    int last_errno() const { return last_errno_; }
    // Datagrams that came from anywhere but the peer's address and port (dropped).
    uint64_t not_from_peer() const { return not_from_peer_; }

private:
    FabricSocket() = default;
    int fd_ = -1;
    int last_errno_ = 0;
    uint64_t not_from_peer_ = 0;
    sockaddr_storage peer_{};
    socklen_t peer_len_ = 0;
};

}  // namespace sluice::ha
