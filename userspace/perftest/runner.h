// `sluice perf-test`: one function per subcommand, all sharing the same
// options. Output goes to `out` (tables, or JSON with --json), progress and
// problems to `log`. Returns the exit status.
#pragma once

#include <ostream>
#include <string>

namespace sluice::perftest {

struct PerfTestOptions {
    std::string mode = "compare";  // ipv4 | ipv6 | compare | profile | all | history
    std::string env = "auto";
    std::string prefix;            // "" = the cluster's default prefix
    bool quick = false;
    int passes = 0;                // 0 = 3 (quick: 1)
    std::string baseline;          // "" | kernel | nftables
    bool json = false;
    std::string svg;               // history chart file
    std::string environments_file; // "" = the default lookup
    std::string history_file;      // "" = default_history_path() (paths.h)
    bool no_history = false;
    std::string profiles_dir;      // "" = <source>/profiles
    int profile_seconds = 0;       // perf record length; 0 = 20 (quick: 5)
};

int run_perf_test(const PerfTestOptions& options, std::ostream& out, std::ostream& log);

}  // namespace sluice::perftest
