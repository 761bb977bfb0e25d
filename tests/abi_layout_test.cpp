// The ABI is pinned at compile time in userspace/abi_layout.cpp; this test
// only makes sure the layout numbers a user may rely on in tools stay visible.
#include <gtest/gtest.h>

extern "C" {
#include "sluice_maps.h"
}

TEST(AbiLayout, SessionKeysAreCompact) {
    EXPECT_EQ(sizeof(session_key_v4), 16u);
    EXPECT_EQ(sizeof(session_key_v6), 40u);
}
