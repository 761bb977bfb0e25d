// Heartbeats on the data links (docs/ha.md "Split brain"): the same
// heartbeat datagram the fabric carries, sent as an Ethernet frame of its own
// EtherType (IEEE's local experimental 0x88B5) to the broadcast address on
// each interface of a group. The peer's copy on the same segment proves it
// alive when the fabric is down, so a lost fabric alone never makes two
// active nodes. Frames are not IP: neither the datapath nor host-inbound
// judges them, and they never leave the segment.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::ha {

inline constexpr uint16_t kLinkHeartbeatEtherType = 0x88b5;

class LinkHeartbeat {
public:
    static Result<std::unique_ptr<LinkHeartbeat>> open(const std::string& interface);
    ~LinkHeartbeat();
    LinkHeartbeat(const LinkHeartbeat&) = delete;
    LinkHeartbeat& operator=(const LinkHeartbeat&) = delete;

    const std::string& interface() const { return interface_; }
    int fd() const { return fd_; }
    // Sends `payload` from the interface's current MAC; false on failure
    // (a link that is down, for one).
    bool send(const std::vector<uint8_t>& payload);
    // One received frame's payload (never this node's own), or empty.
    std::vector<uint8_t> receive();

private:
    LinkHeartbeat() = default;
    std::string interface_;
    int ifindex_ = 0;
    int fd_ = -1;
};

}  // namespace sluice::ha
