#include "bench/bench_cli.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "bench/benchmark.h"
#include "bench/interrupt.h"
#include "bench/report.h"
#include "cluster/netns_cluster.h"
#include "cluster/process.h"

namespace sluice::bench {
namespace fs = std::filesystem;
namespace {

struct CommonOptions {
    std::string build_dir;  // "" = the build tree this binary is in
    std::string out;        // the Markdown report
    std::string results;    // the JSON lines
    bool quick = false;
};

[[noreturn]] void finish(int code) {
    throw CLI::RuntimeError(code);
}

// The build tree of this binary (<build>/userspace/sluice), if it is one.
std::string default_build_dir() {
    fs::path self = cluster::self_binary("");
    fs::path build = self.parent_path().parent_path();
    std::error_code ec;
    if (fs::exists(build / "tests", ec)) return build.string();
    return fs::current_path(ec).string() + "/build";
}

std::string unique_prefix(const std::string& name) {
    return "b" + name.substr(0, 2) + std::to_string(getpid() % 1000000);
}

}  // namespace

Result<std::string> BenchRun::tool(const std::string& name) const {
    std::string path = build_dir + "/tests/" + name;
    if (access(path.c_str(), X_OK) != 0)
        return make_error(ErrorCode::NotFound, "no " + path + "; build it: cmake --build " + build_dir +
                                                   " --target " + name + " (or give --build DIR)");
    return path;
}

Status check_machine(const std::vector<std::string>& programs) {
    if (geteuid() != 0) return make_error(ErrorCode::PermissionDenied, "run as root (network namespaces, BPF)");
    std::ifstream stats("/proc/sys/kernel/bpf_stats_enabled");
    int enabled = 0;
    if (stats >> enabled && enabled != 0)
        return make_error("kernel.bpf_stats_enabled is 1; it roughly halves the packet rate. Set it to 0 first.");
    for (const auto& p : programs) {
        auto r = cluster::run_local({"sh", "-c", "command -v " + cluster::shell_quote(p)}, std::chrono::seconds(5));
        if (!r || r->exit_status != 0)
            return make_error(ErrorCode::NotFound, p + " is not installed (scripts/setup.sh installs it)");
    }
    auto mounted = cluster::run_local({"mountpoint", "-q", "/sys/fs/bpf"}, std::chrono::seconds(5));
    if (!mounted || mounted->exit_status != 0) {
        auto m = cluster::run_local({"mount", "-t", "bpf", "bpf", "/sys/fs/bpf"}, std::chrono::seconds(10));
        if (!m || m->exit_status != 0) return make_error("bpffs is not mounted at /sys/fs/bpf and cannot be mounted");
    }
    return {};
}

std::vector<Benchmark> all_benchmarks() {
    return {throughput_benchmark(), scale_benchmark(),  inspect_benchmark(),
            synflood_benchmark(),   ha_benchmark(),     smallpkt_benchmark(), egress_benchmark(),
            observe_benchmark()};
}

void add_bench_commands(CLI::App& app) {
    auto* bench = app.add_subcommand("bench",
                                     "benchmarks on the namespace lab, configurations interleaved, results as JSON "
                                     "lines and a Markdown report (docs/benchmarks.md)");
    bench->require_subcommand(1);
    for (const auto& b : all_benchmarks()) {
        auto* sub = bench->add_subcommand(b.name, b.summary + " (" + b.doc + ")");
        auto opts = std::make_shared<CommonOptions>();
        sub->add_option("--build", opts->build_dir,
                        "build tree with the benchmark tools (default: the tree this sluice was built in)");
        sub->add_option("--out", opts->out, "the Markdown report (default: <build>/" + b.name + "-bench.md)");
        sub->add_option("--results", opts->results, "the JSON-lines results (default: the report's name, .jsonl)");
        sub->add_flag("--quick", opts->quick, "a smoke test of the plumbing in a few minutes (explicit options win)");
        b.add_options(*sub);
        sub->callback([b, opts] {
            catch_interrupts();
            // Progress lines appear as measurements are taken, also when
            // the output goes to a file or a pipe.
            std::cout << std::unitbuf;
            BenchRun run;
            run.build_dir = opts->build_dir.empty() ? default_build_dir() : opts->build_dir;
            run.prefix = unique_prefix(b.name);
            run.quick = opts->quick;
            run.log = &std::cout;
            std::string out = opts->out.empty() ? run.build_dir + "/" + b.name + "-bench.md" : opts->out;
            std::string results_path =
                opts->results.empty() ? (out.size() > 3 && out.ends_with(".md") ? out.substr(0, out.size() - 3) : out) +
                                            ".jsonl"
                                      : opts->results;
            // Every benchmark builds namespaces and loads BPF: say so before
            // a results file is touched.
            if (geteuid() != 0) {
                std::cerr << "sluice bench " << b.name << ": run as root (network namespaces, BPF)\n";
                finish(1);
            }
            std::error_code ec;
            fs::create_directories(fs::path(results_path).parent_path(), ec);
            auto results = ResultLog::open(results_path, b.name);
            if (!results) {
                std::cerr << "sluice bench " << b.name << ": " << results.error().message << "\n";
                finish(1);
            }
            run.results = &*results;
            std::cout << "sluice bench " << b.name << ": results to " << results_path << "\n";
            Status s = b.run(run);
            if (!s) {
                std::cerr << "sluice bench " << b.name << ": " << s.error().message << "\n";
                const auto& recs = results->records();
                // The setup record alone is not a measurement.
                if (std::any_of(recs.begin(), recs.end(),
                                [](const nlohmann::json& r) { return r.value("event", "") != "setup"; }))
                    std::cerr << "sluice bench " << b.name << ": what was measured is in " << results_path << "\n";
                else if (!recs.empty())
                    std::cerr << "sluice bench " << b.name << ": nothing was measured; " << results_path
                              << " holds only the run's settings\n";
                else
                    std::cerr << "sluice bench " << b.name << ": nothing was measured; " << results_path
                              << " is as it was\n";
                finish(1);
            }
            std::string text = b.report(results->records());
            if (auto w = write_report(out, text); !w) {
                std::cerr << "sluice bench " << b.name << ": " << w.error().message << "\n";
                finish(1);
            }
            std::cout << "\n==================================================================\n"
                      << text << "sluice bench " << b.name << ": report written to " << out << "\n";
            finish(0);
        });
    }
    auto* report = bench->add_subcommand("report", "render the report of a results file again (JSON lines)");
    auto file = std::make_shared<std::string>();
    report->add_option("results", *file, "a .jsonl file a benchmark wrote")->required();
    report->callback([file] {
        auto records = ResultLog::read(*file);
        if (!records) {
            std::cerr << "sluice bench report: " << records.error().message << "\n";
            finish(1);
        }
        if (records->empty() || !records->front().contains("bench")) {
            std::cerr << "sluice bench report: " << *file << " holds no benchmark records\n";
            finish(1);
        }
        std::string name = records->front()["bench"].get<std::string>();
        for (const auto& b : all_benchmarks())
            if (b.name == name) {
                std::cout << b.report(*records);
                finish(0);
            }
        std::cerr << "sluice bench report: no benchmark named '" << name << "'\n";
        finish(1);
    });
}

}  // namespace sluice::bench
