#include "perftest/perftest_cli.h"

#include <iostream>
#include <memory>

#include "perftest/runner.h"

namespace sluice::perftest {

void add_perf_test_commands(CLI::App& app) {
    auto options = std::make_shared<PerfTestOptions>();
    auto* sub = app.add_subcommand(
        "perf-test", "throughput (iperf3) and CPU profile (perf) through the cluster's active firewall");
    sub->add_option("mode", options->mode, "ipv4 | ipv6 | compare (default) | profile | all | history")
        ->check(CLI::IsMember({"ipv4", "ipv6", "compare", "profile", "all", "history"}));
    sub->add_option("--env", options->env, "environment from cluster/environments.yaml, or auto (default)");
    sub->add_option("--prefix", options->prefix, "which local (netns) cluster: its --prefix from `cluster up`");
    sub->add_flag("--quick", options->quick, "iperf3 -P 1 -t 3 with a timeout, one pass, a short profile");
    sub->add_option("--passes", options->passes, "interleaved passes (default 3; --quick: 1)")
        ->check(CLI::Range(1, 50));
    sub->add_option("--baseline", options->baseline,
                    "also measure without sluice in the same run: kernel (plain forwarding) or nftables")
        ->check(CLI::IsMember({"kernel", "nftables"}));
    sub->add_flag("--json", options->json, "machine-readable output");
    sub->add_option("--svg", options->svg, "history: draw the runs as an SVG chart into FILE");
    sub->add_option("--environments", options->environments_file, "environments file (default: cluster/environments.yaml)");
    sub->add_option("--history", options->history_file, "history file (default: $SLUICE_STATE_DIR/perf-test/history.csv, /var/lib/sluice without it)");
    sub->add_flag("--no-history", options->no_history, "do not append this run to the history");
    sub->add_option("--profiles", options->profiles_dir, "folder of <env>.yaml profile expectations (default: profiles/)");
    sub->add_option("--profile-seconds", options->profile_seconds, "perf record length (default 20; --quick: 5)")
        ->check(CLI::Range(1, 600));
    sub->callback([options] {
        int status = run_perf_test(*options, std::cout, std::cerr);
        std::cout.flush();
        if (status != 0) throw CLI::RuntimeError(status);
        // main() goes on to dispatch the daemon's own subcommands after the
        // parse; a finished perf-test ends the program here, with status 0.
        throw CLI::Success();
    });
}

}  // namespace sluice::perftest
