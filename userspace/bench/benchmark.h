// One benchmark is its description: its options, what it measures (through
// the harness: Lab, SluiceFirewall, NftFirewall, run_iperf, run_connrate,
// the schedule) and how its records become tables. The harness
// (bench_cli.cpp) owns everything else: preconditions, the lab's life and
// cleanup, the results file, the report file, `sluice bench report`.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/results.h"
#include "common/result.h"

namespace sluice::bench {

// What the harness gives a benchmark's run.
struct BenchRun {
    std::string build_dir;      // holds tests/sluice_connrate, tests/sluice_xdp_cost, ...
    std::string prefix;         // the lab's namespace prefix, unique to this run
    bool quick = false;         // --quick: a few minutes, to check the plumbing
    ResultLog* results = nullptr;
    std::ostream* log = nullptr;  // progress lines, as measurements are taken

    // build_dir/tests/NAME, or an Error saying how to build it.
    Result<std::string> tool(const std::string& name) const;
    std::ostream& out() const { return *log; }
};

struct Benchmark {
    std::string name;     // `sluice bench NAME`
    std::string summary;  // one line for --help
    std::string doc;      // where its results are discussed (docs/...)
    // Registers the benchmark's own options on its subcommand.
    std::function<void(CLI::App&)> add_options;
    // Measures; every measurement goes to run.results as it is taken.
    std::function<Status(BenchRun& run)> run;
    // The Markdown report from the records alone.
    std::function<std::string(const std::vector<nlohmann::json>& records)> report;
};

Benchmark throughput_benchmark();  // per-packet cost; iperf3 kernel vs sluice vs sluice + NAT (docs/benchmarks.md)
Benchmark scale_benchmark();       // 10,000 rules: sluice vs nftables linear and sets (docs/scale.md)
Benchmark inspect_benchmark();     // the inspection stage's cost (docs/inspect-bench.md)
Benchmark synflood_benchmark();    // SYN flood and one-source flood (docs/host-protection.md)
Benchmark ha_benchmark();          // failover: sluice's HA pair vs keepalived + conntrackd (docs/ha.md)
Benchmark smallpkt_benchmark();    // 64-byte UDP: Mpps, loss, CPU ns per forwarded packet (docs/benchmarks.md)
Benchmark egress_benchmark();      // egress by name: sluice vs dnsmasq + nftables sets (docs/benchmarks.md)
Benchmark observe_benchmark();     // flow logs, metrics scraping, capture: off vs on (docs/benchmarks.md)

// Every benchmark, in the order `sluice bench --help` lists them.
std::vector<Benchmark> all_benchmarks();

// Ok when the machine can run a lab benchmark: root, bpf_stats off, the
// programs named (e.g. "iperf3", "nft") on PATH.
Status check_machine(const std::vector<std::string>& programs);

}  // namespace sluice::bench
