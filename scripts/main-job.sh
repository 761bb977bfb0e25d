#!/usr/bin/env bash
# The README's main-job command (as root on Debian 12): install, build, bring
# up the local two-node cluster (network namespaces), run
# `sluice perf-test compare --baseline kernel` through its active firewall —
# IPv4 and IPv6 iperf3 from the LAN host to the WAN host, sluice and plain
# kernel forwarding interleaved in the same run — and take the cluster down
# again, leaving no namespace, link, pin or process behind.
#
# Knobs (environment): PASSES (3), SKIP_SETUP=1 / SKIP_BUILD=1 to reuse an
# existing build/, SLUICE_BIN=PATH for another binary, EXTRA="--quick" etc.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

[ "${SKIP_SETUP:-0}" = 1 ] || bash scripts/setup.sh
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
    cmake --build build -j"$(nproc)" --target sluice
fi
SLUICE=${SLUICE_BIN:-$ROOT/build/userspace/sluice}
P="mj$$"
P=${P:0:8}   # namespace and link names must fit the kernel's 15 characters
UP=0

cleanup() {
    local rc=$?
    set +e
    if [ "$UP" = 1 ]; then
        echo "== sluice cluster down --prefix $P"
        "$SLUICE" cluster down --prefix "$P" || rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

echo "== sluice cluster up --prefix $P"
UP=1
"$SLUICE" cluster up --env netns --prefix "$P"
echo "== sluice perf-test compare --baseline kernel --passes ${PASSES:-3}"
# shellcheck disable=SC2086
"$SLUICE" perf-test compare --env netns --prefix "$P" --baseline kernel --passes "${PASSES:-3}" ${EXTRA:-}
