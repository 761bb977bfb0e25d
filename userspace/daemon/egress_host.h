// The egress policy as the daemon hosts it (docs/egress.md): runs the DNS
// proxy while the config has scopes, tells the fast path where it listens
// (egress_cfg), lends it the learned-address maps, and removes expired
// entries. A scope whose id or rules changed on reload forgets what it
// learned (its entries were allowed by rules that are gone).
#pragma once

#include <functional>
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
    // A rule change without a reload (`sluice egress add|delete|replace`):
    // the running config with the change is checked and compiled as a
    // reload's would be, then the tables and the proxy take it; on an error
    // nothing changes. Deleting a rule that is not there is not an error. The
    // next reload applies the file again (the change is not written to it).
    enum class RuleChange { add, remove, replace };
    Result<std::string> change_rule(RuleChange change, const std::string& scope, const std::string& rule_yaml,
                                    size_t position);

    // Called with the new policy after a rule change at run time (the
    // inspection stage's SNI checks follow it).
    void on_policy_change(std::function<void(std::shared_ptr<const config::Egress>)> listener) {
        policy_listener_ = std::move(listener);
    }

    // Once per daemon loop: expired learned addresses go.
    void tick();
    void stop();

    // The "egress" part of the published state (`sluice show egress`).
    nlohmann::json published() const;

private:
    Status write_proxy_config(bool up, uint16_t port) const;

    const Datapath& dp_;
    std::shared_ptr<const config::Config> config_;  // the running config (with runtime rule changes)
    egress::LearnedAddresses learned_;
    std::shared_ptr<const config::Egress> policy_;
    std::unique_ptr<egress::DnsProxy> proxy_;
    std::shared_ptr<PuntRoutingLease> routing_;
    std::map<uint8_t, std::string> scope_fingerprints_;  // id -> what its learning depended on
    std::function<void(std::shared_ptr<const config::Egress>)> policy_listener_;
};

}  // namespace sluice
