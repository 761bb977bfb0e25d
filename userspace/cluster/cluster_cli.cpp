#include "cluster/cluster_cli.h"

#include <iostream>
#include <memory>

#include "cluster/environment.h"
#include "cluster/incus_cli.h"
#include "cluster/incus_cluster.h"
#include "cluster/netns_cluster.h"

namespace sluice::cluster {
namespace {

struct ClusterOptions {
    std::string env = "netns";
    std::string prefix = kDefaultPrefix;
    std::string environments_file;
    bool json = false;
    bool verbose = false;
    bool dry_run = false;      // incus: print the incus commands only
    std::string package;       // incus: the sluice .deb for the firewalls
    std::string topology = "cluster";  // netns: a lab from cluster/topology.h
    bool bare = false;         // netns: the topology only, nothing started
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

void incus_status(const Environment& env, IncusCli& incus, bool json) {
    auto st = incus_cluster_status(env, incus);
    if (!st) fail(st.error().message);
    if (json) {
        nlohmann::json j{{"environment", env.name}, {"kind", "incus"}, {"remote", env.remote}, {"healthy", st->healthy}};
        j["items"] = nlohmann::json::array();
        for (const auto& i : st->items)
            j["items"].push_back({{"kind", i.kind}, {"role", i.role}, {"name", i.name}, {"state", i.state},
                                  {"detail", i.detail}});
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << "environment " << env.name << " (incus" << (env.remote.empty() ? "" : ", remote " + env.remote)
                  << ")\n";
        for (const auto& i : st->items)
            std::cout << "  " << i.kind << " " << i.role << ": " << i.name << " " << i.state
                      << (i.detail.empty() ? "" : " (" + i.detail + ")") << "\n";
        std::cout << (st->healthy ? "healthy" : "NOT healthy") << "\n";
    }
    if (!st->healthy) throw CLI::RuntimeError(1);
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

    auto incus_options = [opts](CLI::App* sub, bool with_package) {
        sub->add_flag("--dry-run", opts->dry_run, "incus: print the incus commands instead of running them");
        if (with_package)
            sub->add_option("--package", opts->package,
                            "incus: the sluice .deb to install on the firewalls (default: build/sluice_*.deb, "
                            "made with cpack when missing)");
    };

    auto* up = cluster->add_subcommand(
        "up", "build the cluster (netns: namespaces, bridges; incus: networks, instances, the sluice package; "
              "sluice on fw0/fw1, iperf3 -s)");
    common(up, false);
    incus_options(up, true);
    up->add_option("--topology", opts->topology,
                   "netns: the lab to build: cluster (LAN host, fw0, fw1, WAN host, switch, fabric), cluster-ha "
                   "(the same as an HA pair: the hosts route through virtual addresses, docs/ha.md), single "
                   "(LAN host, fw, WAN host), single-dmz (single plus an empty bridge dmz0 on fw)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cluster", "cluster-ha", "single", "single-dmz"}));
    up->add_flag("--bare", opts->bare,
                 "netns: build the topology only; start neither sluice nor iperf3 (tests and benchmarks start "
                 "their own)");
    up->callback([opts] {
        IncusCli incus;
        Environment env = resolve(*opts, incus);
        if (env.kind == EnvironmentKind::incus) {
            if (opts->topology != "cluster" || opts->bare)
                fail("--topology and --bare are for the netns environment; Incus builds the two-node cluster", 2);
            IncusUpOptions o{.package = opts->package, .dry_run = opts->dry_run};
            if (auto s = incus_cluster_up(env, incus, o, std::cout); !s) fail(s.error().message);
            succeed();
        }
        if (opts->dry_run) fail("--dry-run is for incus environments", 2);
        NetnsClusterOptions o;
        o.prefix = opts->prefix;
        o.topology = opts->topology;
        o.start_sluice = o.start_iperf3 = !opts->bare;
        if (auto s = cluster_up(o, std::cout); !s) fail(s.error().message);
        succeed();
    });

    auto* down = cluster->add_subcommand("down", "remove every namespace, link, pin and process the cluster made");
    common(down, false);
    incus_options(down, false);
    down->callback([opts] {
        IncusCli incus;
        Environment env = resolve(*opts, incus);
        if (env.kind == EnvironmentKind::incus) {
            if (auto s = incus_cluster_down(env, incus, opts->dry_run, std::cout); !s) fail(s.error().message);
            succeed();
        }
        if (opts->dry_run) fail("--dry-run is for incus environments", 2);
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
            fail("cluster firewall is for the netns environment; on Incus: incus exec FW -- systemctl stop|start sluice", 2);
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
