// The `sluice` command line: one binary, a subcommand per task (docs/config.md
// "Commands").
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/control.h"
#include "cli/show.h"
#include "cli/show_egress.h"
#include "cli/top.h"
#include "cluster/cluster_cli.h"
#include "cli/check.h"
#include "daemon/daemon.h"
#include "loader/instance_paths.h"
#include "perftest/perftest_cli.h"
#include "bench/bench_cli.h"

int main(int argc, char** argv) {
    CLI::App app{"sluice: a stateful zone firewall whose fast path runs in XDP/TC"};
    app.require_subcommand(1);
    std::string config_path;
    std::string instance = "default";
    bool json = false;
    std::string netns;
    app.add_option("--netns", netns, "run in this network namespace (as listed by `ip netns`)");

    auto* run = app.add_subcommand("run", "load, attach and serve until SIGTERM (SIGHUP reloads)");
    run->add_option("-c,--config", config_path, "configuration file")->required();
    run->add_option("--instance", instance, "instance name");
    std::string node;
    run->add_option("--node", node, "which node of the config's ha: pair this is (default: /etc/sluice/node)");

    auto* check = app.add_subcommand("check", "validate a configuration file; print every error");
    check->add_option("-c,--config", config_path, "configuration file")->required();
    check->add_flag("--json", json, "machine-readable output");

    auto* reload = app.add_subcommand("reload", "re-read the running instance's configuration file");
    reload->add_option("--instance", instance, "instance name");

    auto* down = app.add_subcommand("down", "stop the instance, detach its programs, remove its pins");
    down->add_option("--instance", instance, "instance name");

    auto* show =
        app.add_subcommand("show", "show sessions, stats, zones, policies, filters, host-inbound, screens, nat, inspect or egress");
    std::string what;
    show->add_option("what", what, "sessions | stats | zones | policies | filters | host-inbound | screens | nat | inspect | egress")
        ->required()
        ->check(CLI::IsMember(
            {"sessions", "stats", "zones", "policies", "filters", "host-inbound", "screens", "nat", "inspect", "egress"}));
    show->add_option("--instance", instance, "instance name");
    show->add_flag("--json", json, "machine-readable output");

    auto* inspect = app.add_subcommand("inspect", "stop or start the running instance's inspection stage");
    std::string inspect_action;
    inspect->add_option("action", inspect_action, "stop | start")->required()->check(CLI::IsMember({"stop", "start"}));
    inspect->add_option("--instance", instance, "instance name");

    sluice::cli::TopOptions top_options;
    auto* top = sluice::cli::add_top_command(app, top_options);

    auto* ha = app.add_subcommand("ha", "the HA pair: this node's roles and sync (status), a planned switchover (failover)");
    ha->require_subcommand(1);
    auto* ha_status = ha->add_subcommand("status", "role per group, the peer, last heartbeat, sync counters");
    ha_status->add_option("--instance", instance, "instance name");
    ha_status->add_flag("--json", json, "machine-readable output");
    auto* ha_failover = ha->add_subcommand("failover", "hand GROUP (default: every group this node carries) to the peer");
    std::string ha_group;
    ha_failover->add_option("group", ha_group, "redundancy group (ha.groups)");
    ha_failover->add_option("--instance", instance, "instance name");

    auto* egress = app.add_subcommand(
        "egress", "change the running egress policy's rules without a reload (the next reload applies the file again)");
    egress->require_subcommand(1);
    std::string egress_scope, egress_rule;
    size_t egress_position = 0;
    auto* egress_add = egress->add_subcommand("add", "add RULE to SCOPE (at the end, or at --at N)");
    egress_add->add_option("scope", egress_scope, "egress scope")->required();
    egress_add->add_option("rule", egress_rule, "the rule as YAML: '{ action: allow, name: mirror.bench.test }'")->required();
    egress_add->add_option("--at", egress_position, "1-based position")->check(CLI::PositiveNumber);
    egress_add->add_option("--instance", instance, "instance name");
    auto* egress_delete = egress->add_subcommand("delete", "delete every rule of SCOPE equal to RULE (none: not an error)");
    egress_delete->add_option("scope", egress_scope, "egress scope")->required();
    egress_delete->add_option("rule", egress_rule, "the rule as YAML")->required();
    egress_delete->add_option("--instance", instance, "instance name");
    auto* egress_replace = egress->add_subcommand("replace", "replace rule N of SCOPE (as `show egress` numbers them) with RULE");
    egress_replace->add_option("scope", egress_scope, "egress scope")->required();
    egress_replace->add_option("index", egress_position, "1-based rule number")->required()->check(CLI::PositiveNumber);
    egress_replace->add_option("rule", egress_rule, "the rule as YAML")->required();
    egress_replace->add_option("--instance", instance, "instance name");

    sluice::perftest::add_perf_test_commands(app);
    sluice::cluster::add_cluster_commands(app);
    sluice::bench::add_bench_commands(app);
    CLI11_PARSE(app, argc, argv);
    if (!netns.empty()) {
        if (auto s = sluice::enter_netns(netns); !s) {
            std::cerr << "sluice: " << s.error().message << "\n";
            return 1;
        }
    }

    if (*run) return sluice::run_daemon(sluice::RunOptions{.config_path = config_path, .instance = instance, .node = node});
    if (*check) return sluice::cli::run_check(config_path, std::cout, std::cerr, json);
    if (*reload) return sluice::cli::reload(instance, std::cout, std::cerr);
    if (*down) return sluice::cli::down(instance, std::cout, std::cerr);
    if (*inspect) return sluice::cli::inspect_stage(instance, inspect_action == "start", std::cout, std::cerr);
    if (*top) return sluice::cli::top(top_options, std::cout, std::cerr);
    if (*ha_status) return sluice::cli::ha_status(instance, json, std::cout, std::cerr);
    if (*ha_failover) return sluice::cli::ha_failover(instance, ha_group, std::cout, std::cerr);
    if (*show) return sluice::cli::show(what, instance, json, std::cout, std::cerr);
    for (auto* sub : {egress_add, egress_delete, egress_replace})
        if (*sub)
            return sluice::cli::egress_rule(instance, sub->get_name(), egress_scope, egress_rule, egress_position, std::cout,
                                            std::cerr);
    return 1;
}
