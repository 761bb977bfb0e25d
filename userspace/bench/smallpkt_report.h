// The report of `sluice bench smallpkt`, from its JSON-lines records alone:
// per configuration and rate, the medians (min–max) over passes of the
// offered and received rates, the loss and the CPU ns per forwarded packet,
// and that CPU time as a ratio to kernel forwarding and to the minimal XDP
// redirect of the same pass.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sluice::bench {

std::string smallpkt_report(const std::vector<nlohmann::json>& records);

}  // namespace sluice::bench
