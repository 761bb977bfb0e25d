// net.ipv4.conf.<if>.accept_local for NAT. After source NAT the fast path may
// still hand a packet to the kernel to forward (neighbour not resolved, TTL
// expiry...), and that packet already carries the firewall's own address as
// its source; IPv4 drops such packets as martians unless accept_local is 1 on
// the interface they arrive on.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"

namespace sluice {

// True when the config translates anything (any nat.source, destination,
// static or nptv6 rule).
bool config_has_nat(const config::Nat& nat);

// Writes 1 to <proc_sys>/net/ipv4/conf/<ifname>/accept_local (unchanged when
// already 1). proc_sys is "/proc/sys" except in tests.
Status enable_accept_local(const std::string& ifname, const std::string& proc_sys = "/proc/sys");

// enable_accept_local() on each interface; returns one line per failure
// (failures are reported, not fatal: only kernel-forwarded NAT packets suffer).
std::vector<std::string> enable_accept_local_all(const std::vector<std::string>& ifnames,
                                                 const std::string& proc_sys = "/proc/sys");

}  // namespace sluice
