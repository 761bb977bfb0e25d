// Which interfaces run sluice's pipeline, read from the kernel as `ip -j link
// show` (the XDP hook) and `tc -j filter show dev D ingress` (the TC hook of
// the `tc` mode) print it: used to prove sluice is attached (perf-test's
// path check, the Incus cluster's start and status, the benchmarks).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::cluster {

inline constexpr const char* kSluiceXdpProgram = "xdp_main_prog";
inline constexpr const char* kSluiceTcProgram = "tc_main_prog";

// Runs argv on a node; its standard output, or an error when it cannot run
// or exits with a status other than 0.
using NodeCommand = std::function<Result<std::string>(const std::vector<std::string>& argv)>;

// The interfaces of `ip -j link show` output whose XDP program is named
// prog_name (the kernel keeps 15 characters of a name); others that run some
// other XDP program go to *other as "ifname: program".
Result<std::vector<std::string>> interfaces_with_xdp(const std::string& ip_json, const std::string& prog_name,
                                                     std::vector<std::string>* other = nullptr);

// Whether `tc -j filter show dev D ingress` output lists a filter running
// prog_name (15 characters kept, as for XDP).
Result<bool> tc_filter_runs(const std::string& tc_json, const std::string& prog_name);

// The program ids behind the two above (for bpftool prog show id N): the
// filter running prog_name, or `dev`'s XDP program named prog_name (one
// program or multi-attach); nullopt when there is none.
Result<std::optional<uint32_t>> tc_filter_prog_id(const std::string& tc_json, const std::string& prog_name);
Result<std::optional<uint32_t>> xdp_prog_id(const std::string& ip_json, const std::string& dev,
                                            const std::string& prog_name);

// The interfaces running sluice's pipeline at either hook: xdp_main_prog at
// XDP, or tc_main_prog at TC ingress (asked per link without it at XDP,
// loopback aside). *other_xdp: "ifname: program" of other XDP programs.
Result<std::vector<std::string>> interfaces_with_sluice(const NodeCommand& run,
                                                        std::vector<std::string>* other_xdp = nullptr);

// Waits (every 0.5 s, up to 60 s) until sluice's pipeline is on every
// interface in `required` (on any interface when `required` is empty). Ok,
// or what was seen last.
Status wait_for_sluice_attached(const NodeCommand& run, const std::vector<std::string>& required);

}  // namespace sluice::cluster
