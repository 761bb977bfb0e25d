// The `sluice` command line: one binary, a subcommand per task (docs/config.md
// "Commands").
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/capture.h"
#include "cli/trace.h"
#include "cli/control.h"
#include "cli/show.h"
#include "cli/show_egress.h"
#include "cli/top.h"
#include "cluster/cluster_cli.h"
#include "common/option_checks.h"
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
        app.add_subcommand("show", "show sessions, stats, zones, policies, filters, host-inbound, screens, nat, inspect, egress or metrics");
    std::string what;
    show->add_option("what", what, "sessions | stats | zones | policies | filters | host-inbound | screens | nat | inspect | egress | metrics")
        ->required()
        ->check(CLI::IsMember(
            {"sessions", "stats", "zones", "policies", "filters", "host-inbound", "screens", "nat", "inspect", "egress",
             "metrics"}));
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
    egress_add->add_option("--at", egress_position, "1-based position")->check(sluice::positive_number());
    egress_add->add_option("--instance", instance, "instance name");
    auto* egress_delete = egress->add_subcommand("delete", "delete every rule of SCOPE equal to RULE (none: not an error)");
    egress_delete->add_option("scope", egress_scope, "egress scope")->required();
    egress_delete->add_option("rule", egress_rule, "the rule as YAML")->required();
    egress_delete->add_option("--instance", instance, "instance name");
    auto* egress_replace = egress->add_subcommand("replace", "replace rule N of SCOPE (as `show egress` numbers them) with RULE");
    egress_replace->add_option("scope", egress_scope, "egress scope")->required();
    egress_replace->add_option("index", egress_position, "1-based rule number")->required()->check(sluice::positive_number());
    egress_replace->add_option("rule", egress_rule, "the rule as YAML")->required();
    egress_replace->add_option("--instance", instance, "instance name");

    sluice::cli::CaptureOptions capture_options;
    auto* capture = app.add_subcommand(
        "capture", "write the packets the datapath drops (or passes under --reason), with their reason, to a pcap file");
    capture->add_option("-w,--write", capture_options.file, "pcap file to write (NFLOG link type; - for stdout)")->required();
    capture->add_option("--reason", capture_options.reason,
                        "only this drop or pass reason (`sluice show stats` names them); default every drop");
    capture->add_option("--count", capture_options.count, "stop after N packets")
        ->check(sluice::whole_number("0: until --duration or Ctrl-C"));
    capture->add_option("--duration", capture_options.duration_s, "stop after S seconds");
    capture->add_option("--sample", capture_options.sample_every, "keep one packet in N (per CPU); default 1");
    capture->add_option("--snaplen", capture_options.snaplen, "bytes of each frame kept, 64-1518; default 256");
    capture->add_option("--instance", capture_options.instance, "instance name");
    capture->add_flag("--json", capture_options.json, "the summary as JSON");

    sluice::cli::TraceOptions trace_options;
    auto* trace = app.add_subcommand(
        "trace", "what the running datapath would do with a packet, without sending it (BPF_PROG_TEST_RUN)");
    trace->add_option("--in", trace_options.in, "the interface the packet arrives on")->required();
    trace->add_option("--src", trace_options.fields.src, "source address");
    trace->add_option("--dst", trace_options.fields.dst, "destination address");
    trace->add_option("--protocol", trace_options.fields.protocol, "tcp (default), udp, icmp, icmpv6 or a number");
    // The range checked on the text first: CLI11 would otherwise answer
    // 70000 with a bare "Could not convert".
    trace->add_option("--sport", trace_options.fields.src_port, "source port (default 40000)")
        ->check(CLI::Range(0, 65535));
    trace->add_option("--dport", trace_options.fields.dst_port, "destination port (default 80)")
        ->check(CLI::Range(0, 65535));
    trace->add_option("--flags", trace_options.fields.tcp_flags, "TCP flags, letters of FSRPAU (default S)");
    trace->add_option("--icmp-type", trace_options.fields.icmp_type, "ICMP type (default: echo request)");
    trace->add_option("--icmp-code", trace_options.fields.icmp_code, "ICMP code");
    trace->add_option("--payload", trace_options.fields.payload, "payload bytes after the L4 header");
    trace->add_option("--ttl", trace_options.fields.ttl, "TTL / hop limit (default 64)");
    trace->add_option("--pcap", trace_options.pcap, "trace the frames of this pcap file (Ethernet) instead");
    trace->add_option("--instance", trace_options.instance, "instance name");
    trace->add_flag("--json", trace_options.json, "machine-readable output");

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
    if (*capture) return sluice::cli::capture(capture_options, std::cout, std::cerr);
    if (*trace) {
        for (const char* name : {"--src", "--dst", "--protocol", "--sport", "--dport", "--flags", "--icmp-type",
                                 "--icmp-code", "--payload", "--ttl"})
            if (trace->count(name) > 0) trace_options.given.push_back(name);
        return sluice::cli::trace(trace_options, std::cout, std::cerr);
    }
    for (auto* sub : {egress_add, egress_delete, egress_replace})
        if (*sub)
            return sluice::cli::egress_rule(instance, sub->get_name(), egress_scope, egress_rule, egress_position, std::cout,
                                            std::cerr);
    return 1;
}
