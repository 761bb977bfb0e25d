// What hyperscan needs from the machine. Hyperscan refuses to run without
// SSSE3 (and picks faster code paths with AVX2); checking once at start-up
// turns a later HS_ARCH_ERROR from the first scan into a message that names
// the missing CPU feature.
#pragma once

#include <string>

#include "common/result.h"

namespace sluice::inspect {

// Ok when hyperscan can run on this CPU; otherwise says which feature is missing.
Status check_platform();

// The message check_platform() gives when hyperscan refuses the CPU, for the
// given CPU features (separate so it can be tested on any machine).
std::string unsupported_platform_message(bool has_ssse3, bool has_avx2);

// A hyperscan return code (hs_error_t) as its name, e.g. "HS_NOMEM (-2)".
std::string hs_error_name(int code);

}  // namespace sluice::inspect
