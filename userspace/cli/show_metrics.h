// `sluice show metrics [--json]`: what /metrics would answer now, asked of
// the running daemon over its control socket (also without metrics.listen).
#pragma once

#include <ostream>
#include <string>

namespace sluice::cli {

int show_metrics(const std::string& instance, bool json_out, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
