#!/usr/bin/env bash
# The README's test command (run as root on Debian 12):
#   install the packages, start Incus and build its node image, build into
#   build/, run the whole suite with ctest.
# Unit tests need nothing; BPF program tests and integration tests need root
# and BPF (they report "skipped" with a reason otherwise); the Incus test
# needs the daemon scripts/incus-setup.sh installs and starts. Exits with
# ctest's status; ctest's summary is the last thing printed. Two tests at a
# time (ctest -j): unit and BPF program tests side by side (each is its own
# process, loading its own copy of the BPF objects: the verifier's time is
# most of theirs), integration tests one at a time, most of them beside a
# unit or BPF test and those that measure or depend on timing alone
# (tests/CMakeLists.txt says which and why).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# Incus for the cluster test: installed from bookworm-backports, incusd
# started (and stopped again below if this run started it), the offline
# node image built once (cached in /var/cache/sluice/images).
# SLUICE_SKIP_INCUS=1 leaves Incus out (scripts/ci-incus.sh: no Incus inside
# an Incus instance); the Incus test then skips with its reason.
incus_was_running=1
if [ "${SLUICE_SKIP_INCUS:-0}" != 1 ]; then
    incus_was_running=0
    command -v incus >/dev/null && incus admin waitready --timeout 1 >/dev/null 2>&1 && incus_was_running=1
    bash scripts/incus-setup.sh up
    bash scripts/incus-image.sh --variant node
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
rc=0
ctest --test-dir build --output-on-failure -j"$(nproc)" || rc=$?
if [ "$incus_was_running" = 0 ]; then bash scripts/incus-setup.sh stop >/dev/null 2>&1 || true; fi
exit "$rc"
