#include "cluster/cluster_cli.h"

#include <iostream>
#include <memory>

#include "cluster/environment.h"
#include "cluster/incus_cli.h"
#include "cluster/netns_cluster.h"

namespace sluice::cluster {
namespace {

struct ClusterOptions {
    std::string env = "netns";
    std::string prefix = kDefaultPrefix;
    std::string environments_file;
    bool json = false;
    bool verbose = false;
};

[[noreturn]] void fail(const std::string& message, int code = 1) {
    std::cerr << "sluice: " << message << "\n";
    throw CLI::RuntimeError(code);
}

// main.cpp dispatches its own subcommands after parsing and returns 1 for
// anything else; ending the parse with exit code 0 here keeps it out of that.
[[noreturn]] void succeed() {
    throw CLI::RuntimeError(0);
}

Environment resolve(const ClusterOptions& o, IncusCli& incus) {
    auto envs = load_default_environments(o.environments_file);
    if (!envs) fail(envs.error().message);
    std::vector<std::string> notes;
    auto env = select_environment(*envs, o.env, incus, &notes);
    if (!env) fail(env.error().message);
    if (o.env == "auto" && !o.json)
        for (const auto& n : notes) std::cerr << "sluice: detect: " << n << "\n";
    return *env;
}

void incus_managed(const Environment& env, const std::string& verb) {
    std::string remote = env.remote.empty() ? "" : " --remote " + env.remote;
    fail("environment " + env.name + " is an Incus cluster; sluice does not build it. Run:\n  cluster/incus/setup.sh " +
             verb + remote + "\n(see docs/cluster.md)",
         2);
}

void incus_status(const Environment& env, IncusCli& incus, bool json) {
    nlohmann::json j{{"environment", env.name}, {"kind", "incus"}, {"remote", env.remote}};
    j["instances"] = nlohmann::json::array();
    bool all_running = true;
    const std::vector<std::pair<std::string, std::string>> roles{
        {"lan-host", env.lan_host}, {"fw0", env.fw0}, {"fw1", env.fw1}, {"wan-host", env.wan_host}};
    if (!json)
        std::cout << "environment " << env.name << " (incus" << (env.remote.empty() ? "" : ", remote " + env.remote)
                  << ")\n";
    for (const auto& [role, name] : roles) {
        if (name.empty()) continue;
        std::string q = env.qualified(name);
        auto st = incus.instance_status(q);
        std::string status = st ? *st : "UNKNOWN";
        all_running = all_running && status == "RUNNING";
        j["instances"].push_back(
            {{"role", role}, {"name", q}, {"status", status}, {"error", st ? "" : st.error().message}});
        if (!json)
            std::cout << "  " << role << ": " << q << " " << status << (st ? "" : " (" + st.error().message + ")")
                      << "\n";
    }
    j["healthy"] = all_running;
    if (json) std::cout << j.dump(2) << "\n";
    if (!all_running) throw CLI::RuntimeError(1);
    succeed();
}

}  // namespace

void add_cluster_commands(CLI::App& app) {
    auto opts = std::make_shared<ClusterOptions>();
    auto* cluster = app.add_subcommand("cluster", "build, remove or inspect the two-node test cluster");
    cluster->require_subcommand(1);
    auto common = [opts](CLI::App* sub, bool with_json) {
        sub->add_option("--env", opts->env, "environment from cluster/environments.yaml, or auto")
            ->capture_default_str();
        sub->add_option("--prefix", opts->prefix, "netns cluster name prefix (namespaces P-fw0, ...)")
            ->capture_default_str();
        sub->add_option("--environments", opts->environments_file,
                        "environments file (default: cluster/environments.yaml)");
        if (with_json) sub->add_flag("--json", opts->json, "machine-readable output");
    };

    auto* up =
        cluster->add_subcommand("up", "build the cluster (netns: namespaces, bridges, sluice on fw0/fw1, iperf3 -s)");
    common(up, false);
    up->callback([opts] {
        IncusCli incus;
        Environment env = resolve(*opts, incus);
        if (env.kind == EnvironmentKind::incus) incus_managed(env, "up");
        NetnsClusterOptions o;
        o.prefix = opts->prefix;
        if (auto s = cluster_up(o, std::cout); !s) fail(s.error().message);
        succeed();
    });

    auto* down = cluster->add_subcommand("down", "remove every namespace, link, pin and process the cluster made");
    common(down, false);
    down->callback([opts] {
        IncusCli incus;
        Environment env = resolve(*opts, incus);
        if (env.kind == EnvironmentKind::incus) incus_managed(env, "down");
        if (auto s = cluster_down(opts->prefix, std::cout); !s) fail(s.error().message);
        succeed();
    });

    // sluice off/on on fw0 and fw1, topology kept: plain kernel forwarding
    // (what perf-test --baseline kernel measures), and back.
    auto* firewall =
        cluster->add_subcommand("firewall", "stop or start sluice on fw0 and fw1 (netns), keeping the topology");
    auto action = std::make_shared<std::string>();
    firewall->add_option("action", *action, "stop | start")->required()->check(CLI::IsMember({"stop", "start"}));
    common(firewall, false);
    firewall->callback([opts, action] {
        IncusCli incus;
        Environment env = resolve(*opts, incus);
        if (env.kind == EnvironmentKind::incus)
            fail("cluster firewall is for the netns environment; on Incus run sluice in the VMs", 2);
        Status s =
            *action == "stop" ? stop_firewalls(opts->prefix, std::cout) : start_firewalls(opts->prefix, std::cout);
        if (!s) fail(s.error().message);
        succeed();
    });

    auto* status = cluster->add_subcommand("status", "namespaces, links and processes of the cluster");
    common(status, true);
    status->callback([opts] {
        IncusCli incus;
        Environment env = resolve(*opts, incus);
        if (env.kind == EnvironmentKind::incus) return incus_status(env, incus, opts->json);
        if (auto s = validate_prefix(opts->prefix); !s) fail(s.error().message);
        ClusterStatus st = cluster_status(opts->prefix);
        if (opts->json)
            std::cout << st.to_json().dump(2) << "\n";
        else
            st.print(std::cout);
        if (!st.healthy()) throw CLI::RuntimeError(1);
        succeed();
    });
}

}  // namespace sluice::cluster
