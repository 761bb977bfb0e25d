// `limits.sessions` is fixed while the daemon runs: the session maps were
// created at that size and a BPF hash map cannot be resized, so a reloaded
// file that asks for another size is refused as a whole (nothing applied).
#pragma once

#include <cstdint>

#include "common/result.h"
#include "config/config.h"

namespace sluice {

// An error naming the file, line and field (limits.sessions), both sizes and
// how to resize, when `config` asks for another size than the `running`
// table holds (flows per family); else success.
Status check_session_size_unchanged(const config::Config& config, uint32_t running);

}  // namespace sluice
