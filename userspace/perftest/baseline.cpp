#include "perftest/baseline.h"

#include <thread>

#include "cluster/netns_cluster.h"
#include "cluster/xdp_links.h"

namespace sluice::perftest {

namespace {

std::string describe_failure(const std::string& what, const Result<cluster::CommandResult>& r) {
    if (!r) return what + ": " + r.error().message;
    std::string detail = r->err.empty() ? r->out : r->err;
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    return what + " exited with status " + std::to_string(r->exit_status) + (detail.empty() ? "" : ": " + detail);
}

// Loads / removes the nftables ruleset on the active firewall.
class Nftables {
public:
    Nftables(cluster::Executor& executor, std::string node) : executor_(executor), node_(std::move(node)) {}

    Status load() {
        (void)remove();  // a table left by an interrupted run
        auto r = executor_.run(node_, {"nft", nftables_baseline_ruleset()}, std::chrono::seconds(30));
        if (!r || r->exit_status != 0) return make_error(describe_failure("nft (loading the baseline ruleset)", r));
        return {};
    }
    Status remove() {
        auto r = executor_.run(node_, {"nft", "delete", "table", "inet", kNftablesBaselineTable}, std::chrono::seconds(30));
        if (!r) return make_error(describe_failure("nft delete table", r));
        return {};   // "No such file or directory" when it is not there: fine
    }

private:
    cluster::Executor& executor_;
    std::string node_;
};

class NetnsSwitch : public FirewallSwitch {
public:
    NetnsSwitch(cluster::Executor& executor, const cluster::Environment& environment, std::string prefix,
                bool nftables, std::ostream& log)
        : prefix_(std::move(prefix)), nft_(executor, environment.fw0), nftables_(nftables), log_(log) {}

    Status to_baseline() override {
        if (auto s = cluster::stop_firewalls(prefix_, log_); !s) return s;
        if (nftables_) return nft_.load();
        return {};
    }
    Status to_sluice() override {
        if (nftables_) {
            if (auto s = nft_.remove(); !s) return s;
        }
        // Returns once each daemon reports running, i.e. attached.
        return cluster::start_firewalls(prefix_, log_);
    }

private:
    std::string prefix_;
    Nftables nft_;
    bool nftables_;
    std::ostream& log_;
};

// Incus firewalls run sluice as the systemd unit `sluice` (cluster/incus_cluster.h).
class IncusSwitch : public FirewallSwitch {
public:
    IncusSwitch(cluster::Executor& executor, const cluster::Environment& environment, bool nftables)
        : executor_(executor), environment_(environment), nft_(executor, environment.fw0), nftables_(nftables) {}

    Status to_baseline() override {
        for (const auto& node : firewalls()) {
            auto r = executor_.run(node, {"systemctl", "stop", "sluice"}, std::chrono::seconds(60));
            if (!r || r->exit_status != 0) return make_error(describe_failure(node + ": systemctl stop sluice", r));
            // Programs stay attached after a SIGKILL; `down` detaches for sure.
            (void)executor_.run(node, {"sluice", "down"}, std::chrono::seconds(60));
        }
        if (nftables_) return nft_.load();
        return {};
    }
    Status to_sluice() override {
        if (nftables_) {
            if (auto s = nft_.remove(); !s) return s;
        }
        for (const auto& node : firewalls()) {
            auto r = executor_.run(node, {"systemctl", "start", "sluice"}, std::chrono::seconds(60));
            if (!r || r->exit_status != 0) return make_error(describe_failure(node + ": systemctl start sluice", r));
        }
        // The unit is "started" before sluice has attached (~2.7 s here):
        // wait until the kernel shows its program on the interfaces.
        for (const auto& node : firewalls())
            if (auto s = wait_attached(node); !s) return s;
        return {};
    }

private:
    Status wait_attached(const std::string& node) {
        auto s = cluster::wait_for_sluice_attached(
            [&](const std::vector<std::string>& argv) -> Result<std::string> {
                auto r = executor_.run(node, argv, std::chrono::seconds(10));
                if (!r || r->exit_status != 0) return make_error(describe_failure(argv.front(), r));
                return r->out;
            },
            {});
        if (!s) return make_error(node + ", after systemctl start: " + s.error().message);
        return {};
    }
    std::vector<std::string> firewalls() const {
        std::vector<std::string> nodes{environment_.fw0};
        if (!environment_.fw1.empty()) nodes.push_back(environment_.fw1);
        return nodes;
    }
    cluster::Executor& executor_;
    const cluster::Environment& environment_;
    Nftables nft_;
    bool nftables_;
};

}  // namespace

std::string nftables_baseline_ruleset(const std::string& lan_if, const std::string& wan_if) {
    return std::string("table inet ") + kNftablesBaselineTable +
           " {\n"
           "  chain forward {\n"
           "    type filter hook forward priority filter; policy drop;\n"
           "    ct state established,related accept\n"
           "    iifname \"" + lan_if + "\" oifname \"" + wan_if + "\" accept\n"
           "  }\n"
           "}\n";
}

std::unique_ptr<FirewallSwitch> make_firewall_switch(const cluster::Environment& environment,
                                                     cluster::Executor& executor, const std::string& prefix,
                                                     const std::string& baseline, std::ostream& log) {
    bool nftables = baseline == "nftables";
    if (environment.kind == cluster::EnvironmentKind::netns) {
        return std::make_unique<NetnsSwitch>(executor, environment, prefix, nftables, log);
    }
    return std::make_unique<IncusSwitch>(executor, environment, nftables);
}

BaselineGuard::~BaselineGuard() {
    if (on_baseline_) (void)switch_.to_sluice();
}

Status BaselineGuard::to_baseline() {
    if (on_baseline_) return {};
    on_baseline_ = true;   // even half-way: the destructor puts sluice back
    return switch_.to_baseline();
}

Status BaselineGuard::to_sluice() {
    if (!on_baseline_) return {};
    auto s = switch_.to_sluice();
    on_baseline_ = false;
    return s;
}

}  // namespace sluice::perftest
