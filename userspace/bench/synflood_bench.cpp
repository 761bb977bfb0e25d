// `sluice bench synflood`: being ported from scripts/bench-synflood.sh onto the harness.
#include "bench/benchmark.h"

namespace sluice::bench {

Benchmark synflood_benchmark() {
    Benchmark b;
    b.name = "synflood";
    b.summary = "not yet on the harness: run scripts/bench-synflood.sh";
    b.doc = "scripts/bench-synflood.sh";
    b.add_options = [](CLI::App&) {};
    b.run = [](BenchRun&) -> Status { return make_error("not yet on the harness: run scripts/bench-synflood.sh"); };
    b.report = [](const std::vector<nlohmann::json>&) { return std::string(); };
    return b;
}

}  // namespace sluice::bench
