// The start-up check that tells an operator which CPU feature hyperscan misses.
#include <gtest/gtest.h>

#include "inspect/platform.h"

using namespace sluice::inspect;

TEST(InspectPlatform, ThisMachineRunsHyperscan) {
    auto status = check_platform();
    EXPECT_TRUE(status.ok()) << status.error().message;
}

TEST(InspectPlatform, AMissingSsse3IsNamed) {
    EXPECT_EQ(unsupported_platform_message(false, false),
              "hyperscan cannot run on this CPU: it needs SSSE3, which this CPU does not have "
              "(AVX2 (optional, faster): not available); on a VM, give the guest the host's CPU model");
}

TEST(InspectPlatform, ARefusalDespiteSsse3SaysTheLibraryWantsMore) {
    EXPECT_EQ(unsupported_platform_message(true, true),
              "hyperscan refuses this CPU although it has SSSE3 (AVX2 (optional, faster): available): "
              "the installed libhs was built for CPU features this machine lacks");
}

TEST(InspectPlatform, ErrorCodesHaveNames) {
    EXPECT_EQ(hs_error_name(-2), "HS_NOMEM (-2)");
    EXPECT_EQ(hs_error_name(-11), "HS_ARCH_ERROR (-11)");
    EXPECT_EQ(hs_error_name(-99), "unknown hyperscan error (-99)");
}
