// The egress policy as the daemon hosts it (docs/egress.md): runs the DNS
// proxy while the config has scopes, tells the fast path where it listens
// (egress_cfg), lends it the learned-address maps, and removes expired
// entries. A scope whose id or rules changed on reload forgets what it
// learned (its entries were allowed by rules that are gone).
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "config/config.h"
#include "egress/dns_proxy.h"
#include "egress/learned_addresses.h"
#include "loader/datapath.h"
#include "loader/punt_routing.h"

namespace sluice {

class EgressHost {
public:
    explicit EgressHost(const Datapath& dp);
    ~EgressHost() { stop(); }

    // The applied config's egress section: starts, updates or stops the proxy.
    Status adopt(const config::Config& applied);
    // Once per daemon loop: expired learned addresses go.
    void tick();
    void stop();

    // The "egress" part of the published state (`sluice show egress`).
    nlohmann::json published() const;

private:
    Status write_proxy_config(bool up, uint16_t port) const;

    const Datapath& dp_;
    egress::LearnedAddresses learned_;
    std::shared_ptr<const config::Egress> policy_;
    std::unique_ptr<egress::DnsProxy> proxy_;
    std::shared_ptr<PuntRoutingLease> routing_;
    std::map<uint8_t, std::string> scope_fingerprints_;  // id -> what its learning depended on
    std::string last_error_;
};

}  // namespace sluice
