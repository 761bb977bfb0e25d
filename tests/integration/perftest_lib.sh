# Shared start of the perf-test integration tests: paths, a unique cluster
# prefix, skip/fail, and an EXIT trap that always runs
# `sluice cluster down --prefix P` once the test has brought the cluster up.
#
#   source "$(dirname "$0")/perftest_lib.sh"
#   pt_init perftest_quick pq        # NAME, 2-letter prefix tag
#   ...; UP=1; "$SLUICE" cluster up --prefix "$P" ...

pt_init() {
    PT_NAME=$1
    SRC=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
    SLUICE=${SLUICE_BIN:-$SRC/build/userspace/sluice}
    PY=/usr/bin/python3
    P="$2$$"
    P=${P:0:10}
    TMP=$(mktemp -d "/tmp/sluice-it-$PT_NAME.XXXXXX")
    UP=0
    trap pt_cleanup EXIT
    trap 'exit 1' INT TERM HUP

    [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, BPF)"
    [ -x "$SLUICE" ] || skip "no sluice binary at $SLUICE (set SLUICE_BIN)"
    [ -x "$PY" ] || skip "$PY (Debian's python3) is not installed"
    command -v iperf3 >/dev/null || skip "iperf3 is not installed"
    command -v ip >/dev/null || skip "iproute2 is not installed"
    if ! mountpoint -q /sys/fs/bpf; then
        mount -t bpf bpf /sys/fs/bpf 2>/dev/null || skip "bpffs cannot be mounted at /sys/fs/bpf"
    fi
}

fail() { echo "FAIL: $PT_NAME: $*"; exit 1; }
# A skip, unless SLUICE_REQUIRE_BPF=1 says this machine runs these tests (lib.sh it_skip_bpf).
skip() {
    [ "${SLUICE_REQUIRE_BPF:-0}" = 1 ] && fail "SLUICE_REQUIRE_BPF=1, but: $*"
    echo "SKIP: $PT_NAME: $*"
    exit 77
}

pt_cleanup() {
    local rc=$?
    if [ "$UP" = 1 ]; then
        "$SLUICE" cluster down --prefix "$P" >>"$TMP/cluster.log" 2>&1 || { echo "cluster down failed:"; cat "$TMP/cluster.log"; rc=1; }
    fi
    rm -rf "$TMP"
    exit "$rc"
}
