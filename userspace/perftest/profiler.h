// A CPU profile of the active firewall while traffic flows through it:
// iperf3 in the background on the LAN host (started through the executor,
// its `-J` result read when it ends; stopped by PID if it does not),
// `perf record -a -g --freq=997` on the firewall, `perf report --no-children
// --sort=symbol --stdio` read into a Profile. Like every sluice number
// (perftest/path_check.h), a profile is only returned if sluice was attached
// before and after the traffic and its counters moved by what iperf3 got
// through.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "cluster/executor.h"
#include "perftest/compare.h"
#include "perftest/path_check.h"
#include "perftest/perf_report.h"
#include "perftest/profile_review.h"

namespace sluice::perftest {

struct ProfileOptions {
    int record_seconds = 20;      // perf record -- sleep N
    int traffic_seconds = 32;     // iperf3 -t N (outlives the recording: warmup + record + margin)
    int warmup_seconds = 2;       // traffic before recording starts
    int streams = 4;
    int frequency = 997;
};

struct ProfileRun {
    Family family = Family::ipv4;
    std::string node;             // where perf ran
    std::string perf_binary;      // "perf" or "perf_6.1"
    ProfileOptions options;
    IperfResult traffic;          // the background iperf3's result (through sluice, checked)
    Profile profile;
};

// The perf binary on a node: `perf`, else `perf_<major.minor>` of a
// linux-perf package (Debian installs both). An Error saying how to install
// it otherwise.
Result<std::string> find_perf(cluster::Executor& executor, const std::string& node);

// `path` reads the active firewall (PathCheck::for_environment): an Error,
// and no perf run, when sluice is not attached or not counting before the
// traffic; an Error, and no profile, when it was not in the path of it.
Result<ProfileRun> record_profile(cluster::Executor& executor, const cluster::Environment& environment, Family family,
                                  const ProfileOptions& options, PathCheck& path, std::ostream& log);

// Top `limit` symbols.
std::string render_top(const Profile& profile, size_t limit);
// The review table: Symbol | CPU % | Healthy | Red flag | Status | Meaning.
std::string render_review(const std::vector<SymbolReview>& reviews);
// Every BPF program in the profile, by name.
std::string render_bpf_programs(const Profile& profile);
// IPv4 and IPv6 top `limit` side by side, plus the IPv6 - IPv4 delta of each
// symbol either side shows.
std::string render_side_by_side(const Profile& ipv4, const Profile& ipv6, size_t limit);

nlohmann::json profile_to_json(const ProfileRun& run, const std::vector<SymbolReview>* reviews);

}  // namespace sluice::perftest
