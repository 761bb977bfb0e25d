// `sluice bench scale`: being ported from scripts/bench-scale.sh onto the harness.
#include "bench/benchmark.h"

namespace sluice::bench {

Benchmark scale_benchmark() {
    Benchmark b;
    b.name = "scale";
    b.summary = "not yet on the harness: run scripts/bench-scale.sh";
    b.doc = "scripts/bench-scale.sh";
    b.add_options = [](CLI::App&) {};
    b.run = [](BenchRun&) -> Status { return make_error("not yet on the harness: run scripts/bench-scale.sh"); };
    b.report = [](const std::vector<nlohmann::json>&) { return std::string(); };
    return b;
}

}  // namespace sluice::bench
