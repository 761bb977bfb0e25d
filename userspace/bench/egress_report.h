// The Markdown report of `sluice bench egress`, from its JSON-lines records
// alone: per mode the median over rounds of each batch's Req/s, average,
// P50, P99 and DNS lookup average and P99, with the change against baseline
// (the table); the download scenario's throughput; the goal
// read off the medians (reported, never asserted).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sluice::bench {

// The modes, in the order of the table.
const std::vector<std::string>& egress_modes();
// "baseline" -> "baseline (forwarding resolver, no filter)", ...
std::string egress_mode_label(const std::string& mode);

std::string egress_report(const std::vector<nlohmann::json>& records);

}  // namespace sluice::bench
