// What the active node of a group shows on the group's interfaces (docs/ha.md
// "Roles"): the virtual MAC and the virtual addresses, announced with
// gratuitous ARP and unsolicited neighbour advertisements so the switch and
// the hosts send to this node from the first frame. The standby gives the
// interface back its own MAC and holds none of the addresses, so it answers
// nothing for them. Changes go through rtnetlink (libnl-route).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/ha_config.h"

struct nl_sock;

namespace sluice::ha {

using Mac = std::array<uint8_t, 6>;
std::string mac_text(const Mac& mac);

class VirtualPresence {
public:
    // `node_id` makes the fallback MAC of an interface that already carries the
    // virtual one when the agent starts (its own MAC is lost then).
    VirtualPresence(const config::HaGroup& group, uint8_t node_id);
    ~VirtualPresence();
    VirtualPresence(const VirtualPresence&) = delete;
    VirtualPresence& operator=(const VirtualPresence&) = delete;

    // Virtual MAC and addresses on every interface, then an announcement.
    Status take();
    // Own MAC back, virtual addresses removed.
    Status release();
    // Gratuitous ARP for each IPv4 and an unsolicited NA for each IPv6
    // address, on every interface of the group.
    Status announce();

private:
    Status connect();
    Status set_mac(const std::string& ifname, const Mac& mac);
    Result<Mac> current_mac(const std::string& ifname);

    const config::HaGroup& group_;
    uint8_t node_id_;
    ::nl_sock* sock_ = nullptr;
    std::map<std::string, Mac> own_mac_;  // the interface's MAC before the agent touched it
};

}  // namespace sluice::ha
