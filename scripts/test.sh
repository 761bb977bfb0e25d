#!/usr/bin/env bash
# The README's test command (run as root on Debian 12):
#   install the packages, build into build/, run the whole suite with ctest.
# Unit tests need nothing; BPF program tests and integration tests need root
# and BPF (they report "skipped" with a reason otherwise). Exits with ctest's
# status; ctest's summary is the last thing printed. Unit and BPF program
# tests run one per core (each is its own process, loading its own copy of
# the BPF objects: the verifier's time is most of theirs); integration tests
# run alone (RUN_SERIAL), as their traffic shares the cores with the firewall.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
exec ctest --test-dir build --output-on-failure -j"$(nproc)"
