// What `sluice bench smallpkt` measures and how each measurement proves it
// measured that, apart from the lab so it can be tested on synthetic
// inputs: the configurations, the parsers of `ip -j link show` and `sluice
// show zones --json`, and the checks that fail a measurement whose
// configuration was not the one in the path.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::bench {

// kernel, nft-ct, sluice-native, sluice-tc, sluice-generic, xdp-redirect
// (the default order; pass p starts at the p-th).
const std::vector<std::string>& smallpkt_configs();
// "kernel forwarding", "sluice native XDP", ... for the report.
std::string smallpkt_config_label(const std::string& config);
// The xdp-mode a sluice configuration runs with ("native", "tc",
// "generic"), "" for the others.
std::string sluice_mode_of(const std::string& config);
// "a b" or "a,b", checked against smallpkt_configs().
Result<std::vector<std::string>> parse_configs(const std::string& text);

// interface -> xdp_mode of `sluice show zones --json` (attached interfaces
// only).
Result<std::map<std::string, std::string>> sluice_modes_of(const std::string& show_zones_json);
// Ok when every interface runs the pipeline in `mode`; else an Error saying
// what it runs (sluice falls back from a forced native attach to generic
// with a warning only).
Status check_sluice_modes(const std::string& mode, const std::map<std::string, std::string>& modes,
                          const std::vector<std::string>& interfaces);

// The name of the XDP program attached in native (driver) mode to DEV in
// `ip -j link show` output; an Error when there is none, or it runs in
// another mode.
Result<std::string> native_xdp_program(const std::string& ip_json, const std::string& dev);

// The firewall's own count of what it forwarded (sluice's `forward`, the
// nft rules' counters) must account for what the receiver got: at least
// 99 % of it, and something was received at all. `what` names the
// measurement and the counter.
Status check_forwarded(const std::string& what, uint64_t forwarded, uint64_t received);

}  // namespace sluice::bench
