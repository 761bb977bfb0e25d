// Part (c) of `sluice bench observe`: the datapath's own per-packet cost of
// flow logging and drop capture, measured by tests/sluice_xdp_cost
// --observability (BPF_PROG_TEST_RUN on one datapath with both off and on,
// switched every few calls; see that file). The end-to-end parts (a) and (b)
// measure the whole machine, whose pass-to-pass noise here is wider than
// the 3 % the established-packet goal asks about; this part resolves it.
#pragma once

#include "bench/benchmark.h"
#include "common/result.h"

namespace sluice::bench {

struct ObserveDatapathOptions {
    int passes = 20;
    int calls = 2000;        // established: calls of 200 runs each
    int first_calls = 2000;  // first packet and denied SYN: calls of one run
};

// Runs the tool, adds a record per case and pass ({"part": "datapath",
// "case": "established_v4", "pass", "plain_ns_per_packet",
// "observed_ns_per_packet", ...}) and one with its summary table.
Status run_observe_datapath(BenchRun& run, const ObserveDatapathOptions& o);

}  // namespace sluice::bench
