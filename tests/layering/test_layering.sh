#!/usr/bin/env bash
# The layers are enforced by the build (userspace/CMakeLists.txt): a file of
# the compiler layer may include config/ (below it) but not daemon/ (above
# it). Builds two probes against sluice_compiler's include path and expects
# the first to build and the second to fail on the missing header.
set -u
BUILD=${1:?usage: test_layering.sh BUILD_DIR}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
if cmake --build "$BUILD" --target layering_probe_down >"$out" 2>&1; then
    echo "ok    a compiler file including config/config.h builds"
else
    cat "$out"; echo "FAIL: the downward include did not build"; fail=1
fi
if cmake --build "$BUILD" --target layering_probe_up >"$out" 2>&1; then
    echo "FAIL: a compiler file including daemon/daemon.h built: the layers are not enforced"; fail=1
elif grep -q "daemon/daemon.h: No such file or directory" "$out"; then
    echo "ok    a compiler file including daemon/daemon.h does not build (daemon/daemon.h: No such file or directory)"
else
    cat "$out"; echo "FAIL: the upward include failed for another reason"; fail=1
fi
exit $fail
