// Which interfaces run an XDP program, read from the kernel as `ip -j link
// show` prints it (used to prove sluice is attached: perf-test's path check,
// the Incus cluster's start and status).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::cluster {

inline constexpr const char* kSluiceXdpProgram = "xdp_main_prog";

// The interfaces of `ip -j link show` output whose XDP program is named
// prog_name (the kernel keeps 15 characters of a name); others that run some
// other XDP program go to *other as "ifname: program".
Result<std::vector<std::string>> interfaces_with_xdp(const std::string& ip_json, const std::string& prog_name,
                                                     std::vector<std::string>* other = nullptr);

// Waits (every 0.5 s, up to 60 s) until `ip -j link show` output, as
// read_links returns it, shows sluice's program on every interface in
// `required` (on any interface when `required` is empty). Ok, or what was
// seen last.
Status wait_for_sluice_attached(const std::function<Result<std::string>()>& read_links,
                                const std::vector<std::string>& required);

}  // namespace sluice::cluster
