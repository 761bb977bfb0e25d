// Which parts of a config hand packets from the pipeline to tc_punt_prog
// with a record (docs/design.md "Attach modes"): inspect policies (the punt)
// and the SYN proxy (the end of a proxied handshake). On native XDP that
// record rides in the metadata area (bpf_xdp_adjust_meta), which some
// kernels refuse: there a config that uses either cannot run native XDP.
#pragma once

#include <string>

#include "config/config.h"

namespace sluice::config {

// "" when the config uses neither, else what uses it ("policy web-in
// (inspect)", "zone untrust (syn-proxy)"), the first one found.
std::string first_handoff_user(const Config& config);

}  // namespace sluice::config
