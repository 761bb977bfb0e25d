#include "bench/observe_datapath.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "bench/interrupt.h"
#include "bench/lab.h"
#include "cluster/process.h"

namespace sluice::bench {

Status run_observe_datapath(BenchRun& run, const ObserveDatapathOptions& o) {
    auto tool = run.tool("sluice_xdp_cost");
    if (!tool) return tool.error();
    run.out() << "== (c) the datapath: sluice_xdp_cost --observability (BPF_PROG_TEST_RUN), " << o.passes
              << " passes, logging and capture off/on every few calls\n";
    const std::string stem = "/tmp/sluice-bench-observe-" + std::to_string(getpid());
    const std::string summary = stem + ".md", records = stem + ".jsonl";
    auto r = cluster::run_local({*tool, "--observability", "--passes=" + std::to_string(o.passes),
                                 "--calls=" + std::to_string(o.calls), "--first_calls=" + std::to_string(o.first_calls),
                                 "--summary_out=" + summary, "--json_out=" + records,
                                 // Google Benchmark's own table: one line per case and pass.
                                 "--benchmark_format=console"},
                                std::chrono::minutes(30));
    const std::string text = read_text(summary);
    std::ifstream lines(records);
    std::vector<nlohmann::json> parsed;
    std::string line;
    while (std::getline(lines, line))
        if (!line.empty()) parsed.push_back(nlohmann::json::parse(line, nullptr, false));
    std::remove(summary.c_str());
    std::remove(records.c_str());
    if (!r) return r.error();
    if (r->exit_status != 0) return make_error("sluice_xdp_cost --observability failed:\n" + r->out + r->err);
    size_t cases = 0;
    for (auto& record : parsed) {
        if (record.is_discarded() || !record.is_object())
            return make_error("sluice_xdp_cost wrote a line that is not a JSON object to " + records);
        record["part"] = "datapath";
        run.results->add(record);
        ++cases;
    }
    // Twelve cases a pass: established, first packet, denied; two families;
    // the XDP and the TC build.
    if (cases != static_cast<size_t>(o.passes) * 12)
        return make_error("sluice_xdp_cost --observability recorded " + std::to_string(cases) + " case runs, expected " +
                          std::to_string(o.passes * 12));
    run.results->add({{"part", "datapath_summary"}, {"summary_markdown", text}});
    run.out() << text << "\n";
    return check_interrupted();
}

}  // namespace sluice::bench
