// The datapath's learned-address maps (maps/egress.h egress_learn_v4/v6):
// the DNS proxy writes each address of an allowed answer here, for the scope
// that asked, before the client gets the answer; the daemon removes entries
// whose expiry passed. An address learned again keeps the later expiry.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/result.h"
#include "egress/dns_proxy.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::egress {

struct LearnedEntry {
    uint8_t scope = 0;
    int family = 0;                        // AF_INET or AF_INET6
    std::array<uint8_t, 16> address{};
    std::chrono::nanoseconds remaining{0}; // until new flows to it are dropped
    std::vector<egress_port_range> ports;  // empty: every port
};

struct LearnedCounters {
    uint64_t learned = 0;                  // entries created
    uint64_t refreshed = 0;                // live entries learned again
    uint64_t expired = 0;                  // removed by expire()
    uint64_t write_failures = 0;           // map full or write refused
};

class LearnedAddresses {
public:
    LearnedAddresses(int fd_v4, int fd_v6) : fd_v4_(fd_v4), fd_v6_(fd_v6) {}

    // Each address until now + its ttl + grace, on its rule's ports (every
    // port without a rule or when the rule lists none). A live entry keeps
    // the later expiry; its ports are merged with the new ones while they fit
    // (SLUICE_EGRESS_PORT_RANGES), else the newest rule's ports win.
    Status learn(uint8_t scope, const std::vector<LearnedAddress>& addresses, std::chrono::seconds grace);
    // Removes entries whose expiry has passed; how many.
    size_t expire();
    // Removes every entry (of one scope, or all with scope 0): the scope's
    // rules or id changed.
    size_t forget(uint8_t scope);

    std::vector<LearnedEntry> list() const;
    LearnedCounters counters() const;

private:
    template <typename Key>
    size_t remove_if(int fd, bool expired_only, uint8_t scope, uint64_t now);

    int fd_v4_, fd_v6_;
    mutable std::mutex mutex_;  // learn against expire: never delete an entry just refreshed
    std::atomic<uint64_t> learned_{0}, refreshed_{0}, expired_{0}, write_failures_{0};
};

// CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_coarse_ns.
uint64_t monotonic_ns();

}  // namespace sluice::egress
