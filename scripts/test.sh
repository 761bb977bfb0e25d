#!/usr/bin/env bash
# The README's test command (run as root on Debian 12):
#   install the packages, build into build/, run the whole suite with ctest.
# Unit tests need nothing; BPF program tests and integration tests need root
# and BPF (they report "skipped" with a reason otherwise). Exits with ctest's
# status; ctest's summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
exec ctest --test-dir build --output-on-failure
