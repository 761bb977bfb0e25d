// The addresses source NAT to an interface translates to (`translate:
// interface`): nat_ifaddrs follows each configured interface's addresses, on
// every applied config and whenever the netlink watcher sees an address
// change. With NAT configured it also sets accept_local on the interfaces
// (daemon/accept_local.h).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "loader/datapath.h"

namespace sluice {

class NatAddressSync {
public:
    explicit NatAddressSync(const Datapath& dp) : dp_(dp) {}

    // The applied config's NAT section and interfaces; rewrites nat_ifaddrs
    // and sets accept_local when the config translates.
    void adopt(config::Nat nat, std::vector<ResolvedInterface> interfaces);
    // Rewrites nat_ifaddrs from the interfaces' current addresses; logs the
    // addresses when they changed.
    void refresh();

    const config::Nat& nat() const { return nat_; }

private:
    void apply_accept_local();

    const Datapath& dp_;
    config::Nat nat_;
    std::vector<ResolvedInterface> interfaces_;
    std::string logged_;  // the last summary logged
};

}  // namespace sluice
