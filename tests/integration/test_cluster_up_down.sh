#!/usr/bin/env bash
# `sluice cluster up` / `down` twice in a row with the same prefix: each up
# forwards LAN -> WAN through fw0's sluice (IPv4 and IPv6), each down leaves no
# namespace, link, pin, state or process. Also: up on an existing prefix is
# refused, down on an absent or half-built cluster succeeds and cleans up.
source "$(dirname "$0")/lib.sh"
# --- cluster helpers (the same in each test_cluster_*.sh that builds clusters) ---
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
# --- end of cluster helpers ---

it_init cluster-up-down cu
it_need_root_and_bpf
cl_init
cl_prefix ud
C=$CL_LAST

for round in 1 2; do
    it_log "round $round: sluice cluster up --prefix $C"
    if ! "$SLUICE" cluster up --prefix "$C" >"$IT_TMP/up-$round.log" 2>&1; then
        cat "$IT_TMP/up-$round.log"
        it_fail "round $round: cluster up"
        it_finish
    fi
    it_pass "round $round: cluster up"
    it_check "round $round: status reports every namespace and process" cl_healthy "$C"
    pids=$(cl_pids "$C")
    it_expect_eq "round $round: three processes (sluice fw0, fw1, iperf3 -s)" 3 "$(wc -w <<<"$pids")"
    it_check "round $round: sluice's XDP program is on fw0's lan0" sh -c "ip -n $C-fw0 link show lan0 | grep -q xdp"
    it_check "round $round: IPv4 ping LAN host -> WAN host through fw0" cl_ping "$C" 198.18.100.200
    it_check "round $round: IPv6 ping LAN host -> WAN host through fw0" cl_ping "$C" 2001:2:0:100::200
    it_expect_ge "round $round: fw0's sluice has the LAN host's sessions" "$(cl_sessions "$C")" 2
    it_check "round $round: WAN -> LAN is denied (untrust -> trust)" sh -c "! ip netns exec $C-wan-host ping -q -c 2 -i 0.2 -W 1 198.18.1.10 >/dev/null 2>&1"

    if [ "$round" = 1 ]; then
        it_log "firewall stop/start: plain kernel forwarding in between (perf-test --baseline kernel)"
        it_check "cluster firewall stop" "$SLUICE" cluster firewall stop --prefix "$C"
        it_check "no XDP program on fw0's lan0 any more" sh -c "! ip -n $C-fw0 link show lan0 | grep -q xdp"
        it_check "no pins for fw0" test ! -e "/sys/fs/bpf/sluice/netns/$C-fw0"
        it_check "the kernel forwards IPv4 LAN -> WAN" cl_ping "$C" 198.18.100.200
        it_check "the kernel forwards IPv6 LAN -> WAN" cl_ping "$C" 2001:2:0:100::200
        it_check "and WAN -> LAN (no firewall)" ip netns exec "$C-wan-host" ping -q -c 2 -i 0.2 -W 2 198.18.1.10
        it_check "cluster firewall start" "$SLUICE" cluster firewall start --prefix "$C"
        it_check "sluice's XDP program is back on fw0's lan0" sh -c "ip -n $C-fw0 link show lan0 | grep -q xdp"
        it_check "healthy again" cl_healthy "$C"
        it_check "WAN -> LAN denied again" sh -c "! ip netns exec $C-wan-host ping -q -c 2 -i 0.2 -W 1 198.18.1.10 >/dev/null 2>&1"
        pids=$(cl_pids "$C")
        it_check "up on an existing prefix is refused" sh -c "! '$SLUICE' cluster up --prefix $C >'$IT_TMP/again.log' 2>&1"
        it_check "... and says to run down" grep -q "sluice cluster down --prefix $C" "$IT_TMP/again.log"
        it_check "... and left the cluster alone" cl_healthy "$C"
    fi

    it_log "round $round: sluice cluster down --prefix $C"
    it_check "round $round: cluster down" "$SLUICE" cluster down --prefix "$C"
    # shellcheck disable=SC2086
    cl_check_gone "$C" $pids
    it_check "round $round: status says not up (exit 1)" sh -c "! '$SLUICE' cluster status --prefix $C >/dev/null"
done

it_check "down on an absent cluster succeeds" "$SLUICE" cluster down --prefix "$C"

it_log "half-built cluster: two namespaces, a link between them and a state dir"
ip netns add "$C-fw0"
ip netns add "$C-switch"
ip -n "$C-switch" link add fw0-lan type veth peer name lan0 netns "$C-fw0"
mkdir -p "/run/sluice/cluster/$C"
ip netns exec "$C-fw0" sleep 300 &
stray=$!
IT_PIDS+=("$stray")
it_check "down on a half-built cluster succeeds" "$SLUICE" cluster down --prefix "$C"
cl_check_gone "$C" "$stray"
it_check "a bad prefix is refused" sh -c "! '$SLUICE' cluster up --prefix 'Bad/Prefix' 2>/dev/null"
it_finish
