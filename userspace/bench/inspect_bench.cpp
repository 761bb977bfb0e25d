// `sluice bench inspect`: being ported from scripts/bench-inspect.sh onto the harness.
#include "bench/benchmark.h"

namespace sluice::bench {

Benchmark inspect_benchmark() {
    Benchmark b;
    b.name = "inspect";
    b.summary = "not yet on the harness: run scripts/bench-inspect.sh";
    b.doc = "scripts/bench-inspect.sh";
    b.add_options = [](CLI::App&) {};
    b.run = [](BenchRun&) -> Status { return make_error("not yet on the harness: run scripts/bench-inspect.sh"); };
    b.report = [](const std::vector<nlohmann::json>&) { return std::string(); };
    return b;
}

}  // namespace sluice::bench
