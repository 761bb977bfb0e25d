#include "inspect/platform.h"

#include <hs/hs.h>

namespace sluice::inspect {
namespace {

struct CpuFeatures {
    bool ssse3 = false;
    bool avx2 = false;
};

CpuFeatures cpu_features() {
    CpuFeatures features;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    features.ssse3 = __builtin_cpu_supports("ssse3");
    features.avx2 = __builtin_cpu_supports("avx2");
#endif
    return features;
}

}  // namespace

std::string unsupported_platform_message(bool has_ssse3, bool has_avx2) {
    const std::string avx2 = std::string("AVX2 (optional, faster): ") + (has_avx2 ? "available" : "not available");
    if (!has_ssse3)
        // A VM often hides host CPU features unless its CPU model passes them through.
        return "hyperscan cannot run on this CPU: it needs SSSE3, which this CPU does not have (" + avx2 +
               "); on a VM, give the guest the host's CPU model";
    // Debian builds libhs for a baseline CPU; a library built for more (e.g.
    // -march=native elsewhere) refuses a CPU that has SSSE3 but lacks the rest.
    return "hyperscan refuses this CPU although it has SSSE3 (" + avx2 +
           "): the installed libhs was built for CPU features this machine lacks";
}

Status check_platform() {
    if (hs_valid_platform() == HS_SUCCESS) return {};
    CpuFeatures features = cpu_features();
    return make_error(unsupported_platform_message(features.ssse3, features.avx2));
}

std::string hs_error_name(int code) {
    const char* name = "unknown hyperscan error";
    switch (code) {
    case HS_SUCCESS: name = "HS_SUCCESS"; break;
    case HS_INVALID: name = "HS_INVALID"; break;
    case HS_NOMEM: name = "HS_NOMEM"; break;
    case HS_SCAN_TERMINATED: name = "HS_SCAN_TERMINATED"; break;
    case HS_COMPILER_ERROR: name = "HS_COMPILER_ERROR"; break;
    case HS_DB_VERSION_ERROR: name = "HS_DB_VERSION_ERROR"; break;
    case HS_DB_PLATFORM_ERROR: name = "HS_DB_PLATFORM_ERROR"; break;
    case HS_DB_MODE_ERROR: name = "HS_DB_MODE_ERROR"; break;
    case HS_BAD_ALIGN: name = "HS_BAD_ALIGN"; break;
    case HS_BAD_ALLOC: name = "HS_BAD_ALLOC"; break;
    case HS_SCRATCH_IN_USE: name = "HS_SCRATCH_IN_USE"; break;
    case HS_ARCH_ERROR: name = "HS_ARCH_ERROR"; break;
    case HS_INSUFFICIENT_SPACE: name = "HS_INSUFFICIENT_SPACE"; break;
    case HS_UNKNOWN_ERROR: name = "HS_UNKNOWN_ERROR"; break;
    }
    return std::string(name) + " (" + std::to_string(code) + ")";
}

}  // namespace sluice::inspect
