// `sluice show sessions|stats|zones|policies|nat`: read the instance's pinned maps
// and state file directly; the daemon need not be running for maps to be read.
#pragma once

#include <ostream>
#include <string>

namespace sluice::cli {

int show(const std::string& what, const std::string& instance, bool json, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
