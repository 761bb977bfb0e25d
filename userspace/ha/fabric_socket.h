// The fabric's UDP socket (docs/ha.md "Messages"): bound to this node's
// fabric address and the fabric interface, connected to the peer's fabric
// address and port. A connected UDP socket is delivered only datagrams whose
// source is that address and port, so nothing but the peer reaches the
// agent on it, whatever else host-inbound lets through to the port.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/ha_config.h"

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

private:
    FabricSocket() = default;
    int fd_ = -1;
    int last_errno_ = 0;
};

}  // namespace sluice::ha
