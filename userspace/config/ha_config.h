// The `ha:` section (docs/ha.md): two nodes running the same file, which of
// them carries each redundancy group's virtual addresses, and how they find
// out that the other is gone. Which node a process is comes from outside
// the file (`sluice run --node NAME`, or /etc/sluice/node).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/prefix.h"

namespace sluice::config {

// An address the active node adds to an interface: the address and the
// prefix length of the subnet it sits in ("198.18.1.254/24").
struct HaAddress {
    Family family = Family::ipv4;
    std::array<uint8_t, 16> addr{};  // network order
    uint8_t length = 0;
    std::string text;
    Location location;
};

struct HaNode {
    std::string name;
    Location location;
    uint8_t id = 0;                   // 1-255, distinct; the lower wins a tie
    HaAddress fabric_address;         // where the peer sends heartbeats and sync (host length)
};

// One interface of a group as the active node presents it.
struct HaInterface {
    std::string name;
    Location location;
    std::array<uint8_t, 6> virtual_mac{};
    std::vector<HaAddress> addresses;
};

struct HaGroup {
    std::string name;
    Location location;
    uint8_t id = 0;                                   // 1-based, file order
    std::vector<HaInterface> interfaces;
    std::map<std::string, uint8_t> priority;          // node name -> 1-254
    std::map<std::string, Location> priority_locations;  // where each node's was written
    Location priority_location;                       // the priority key
    bool preempt = false;
    struct Monitor {
        std::string interface;
        Location location;
        std::string path;
    };
    std::vector<Monitor> monitor;                     // default: the group's interfaces
};

inline constexpr uint16_t kDefaultHaPort = 4790;
// Redundancy groups per pair; the datapath's ha_groups map has a slot each (maps/ha.h).
inline constexpr size_t kMaxHaGroups = 8;

struct Ha {
    bool enabled = false;           // the section is present
    Location location;
    std::string fabric;             // the interface to the peer
    Location fabric_location;
    uint16_t port = kDefaultHaPort; // UDP, heartbeats and sync
    std::vector<HaNode> nodes;      // exactly two
    std::chrono::milliseconds heartbeat_interval{20};
    std::chrono::milliseconds hold_time{100};
    std::vector<HaGroup> groups;

    const HaNode* find_node(const std::string& name) const;
    // The node that is not `name` (nullptr when name is not a node).
    const HaNode* peer_of(const std::string& name) const;
    // The group an interface belongs to, or nullptr.
    const HaGroup* group_of_interface(const std::string& name) const;
};

}  // namespace sluice::config
