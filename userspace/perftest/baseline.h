// What --baseline puts in sluice's place on the active firewall for the
// baseline passes, and how sluice comes back afterwards:
//   kernel    sluice detached: the kernel forwards on its own.
//   nftables  sluice detached and an equivalent nftables ruleset loaded
//             (conntrack, the same policy), removed again afterwards.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "cluster/environment.h"
#include "cluster/executor.h"
#include "common/result.h"

namespace sluice::perftest {

// The nftables ruleset equivalent to the cluster's sluice policy: forward
// chain, policy drop; established/related accepted; lan0 -> wan0 accepted.
// One nft command (a table definition), runnable as `nft <text>`.
std::string nftables_baseline_ruleset(const std::string& lan_if = "lan0", const std::string& wan_if = "wan0");
inline constexpr const char* kNftablesBaselineTable = "sluice_perftest_baseline";

// Switching the active firewall between sluice and a baseline.
class FirewallSwitch {
public:
    virtual ~FirewallSwitch() = default;
    // sluice off, the baseline in place.
    virtual Status to_baseline() = 0;
    // The baseline gone, sluice attached again.
    virtual Status to_sluice() = 0;
};

// For the environment: netns uses the cluster's stop_firewalls /
// start_firewalls (by PID); incus stops and starts the sluice systemd unit on
// the firewall nodes. `baseline` is "kernel" or "nftables".
std::unique_ptr<FirewallSwitch> make_firewall_switch(const cluster::Environment& environment,
                                                     cluster::Executor& executor, const std::string& prefix,
                                                     const std::string& baseline, std::ostream& log);

// Puts sluice back (and removes a loaded baseline) when it goes out of scope
// while the baseline is in place: an error half-way must not leave the
// cluster without its firewall.
class BaselineGuard {
public:
    explicit BaselineGuard(FirewallSwitch& sw) : switch_(sw) {}
    ~BaselineGuard();
    BaselineGuard(const BaselineGuard&) = delete;
    BaselineGuard& operator=(const BaselineGuard&) = delete;

    Status to_baseline();
    Status to_sluice();

private:
    FirewallSwitch& switch_;
    bool on_baseline_ = false;
};

}  // namespace sluice::perftest
