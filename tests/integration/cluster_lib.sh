# Helpers for the integration tests that build whole clusters with
# `sluice cluster up`. Source after lib.sh.
# Unique prefixes per test (cl_prefix); the EXIT trap always runs
# `sluice cluster down --prefix P` for each. Traffic only inside the clusters'
# namespaces, on 198.18.0.0/15 and 2001:2::/48.

CL_PREFIXES=()

# cl_prefix TAG: sets CL_LAST to a unique cluster prefix ("c<pid>TAG", <= 12
# chars) and registers it for cleanup.
cl_prefix() {
    CL_LAST="c$(($$ % 1000000))$1"
    CL_PREFIXES+=("$CL_LAST")
}

cl_cleanup() {
    local rc=$? p
    set +e
    for p in "${CL_PREFIXES[@]}"; do
        "$SLUICE" cluster down --prefix "$p" >/dev/null 2>&1
    done
    (exit "$rc")
    it_cleanup
}

cl_init() {
    trap cl_cleanup EXIT
    command -v iperf3 >/dev/null || it_skip "iperf3 is not installed (the cluster runs iperf3 -s on the WAN host)"
}

# cl_pids PREFIX: the PIDs `cluster status --json` reports.
cl_pids() {
    "$SLUICE" cluster status --prefix "$1" --json 2>/dev/null |
        "$IT_PY" -c 'import json,sys; print(" ".join(str(p["pid"]) for p in json.load(sys.stdin)["processes"]))'
}

# cl_healthy PREFIX: status says every namespace and process is there.
cl_healthy() {
    "$SLUICE" cluster status --prefix "$1" --json >"$IT_TMP/status-$1.json" 2>&1 &&
        "$IT_PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["healthy"] else 1)' "$IT_TMP/status-$1.json"
}

# cl_ping PREFIX ADDR: from PREFIX's LAN host (through its fw0).
cl_ping() { ip netns exec "$1-lan-host" ping -q -c 3 -i 0.2 -W 2 "$2" >/dev/null 2>&1; }

# cl_sessions PREFIX: sessions in fw0's sluice from the LAN host.
cl_sessions() {
    "$SLUICE" --netns "$1-fw0" show sessions --json 2>/dev/null |
        "$IT_PY" -c 'import json,sys; print(sum(1 for s in json.load(sys.stdin)["sessions"] if s["source"] in ("198.18.1.10", "2001:2:0:1::10")))'
}

pid_gone() {
    local pid=$1 state
    [ -r "/proc/$pid/stat" ] || return 0
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)
    [ -z "$state" ] || [ "$state" = Z ] || [ "$state" = X ]
}

# cl_check_gone PREFIX PIDS...: nothing of the cluster is left.
cl_check_gone() {
    local p=$1 pid
    shift
    it_expect_eq "$p: no namespace left" "" "$(ip netns list | awk '{print $1}' | grep "^$p-" | tr '\n' ' ')"
    it_expect_eq "$p: no link in the root namespace" "" "$(ip -o link show | grep -E "$p|br-lan|br-wan" | tr '\n' ' ')"
    it_check "$p: no pins under /sys/fs/bpf/sluice" test ! -e "/sys/fs/bpf/sluice/netns/$p-fw0" -a ! -e "/sys/fs/bpf/sluice/netns/$p-fw1"
    it_check "$p: no /run/sluice/cluster/$p" test ! -e "/run/sluice/cluster/$p"
    it_check "$p: no /run/sluice/netns/$p-fw*" test ! -e "/run/sluice/netns/$p-fw0" -a ! -e "/run/sluice/netns/$p-fw1"
    for pid in "$@"; do
        it_check "$p: process $pid is gone" pid_gone "$pid"
    done
}
