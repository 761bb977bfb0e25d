#!/usr/bin/env bash
# `sluice cluster up` / `down` twice in a row with the same prefix: each up
# forwards LAN -> WAN through fw0's sluice (IPv4 and IPv6), each down leaves no
# namespace, link, pin, state or process. Also: up on an existing prefix is
# refused, down on an absent cluster or on one whose up was killed part-way
# succeeds and cleans up.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cluster_lib.sh"

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
    it_check "round $round: sluice's pipeline is on fw0's lan0" it_pipeline_on "$C-fw0" lan0
    it_check "round $round: IPv4 ping LAN host -> WAN host through fw0" cl_ping "$C" 198.18.100.200
    it_check "round $round: IPv6 ping LAN host -> WAN host through fw0" cl_ping "$C" 2001:2:0:100::200
    it_expect_ge "round $round: fw0's sluice has the LAN host's sessions" "$(cl_sessions "$C")" 2
    it_check "round $round: WAN -> LAN is denied (untrust -> trust)" sh -c "! ip netns exec $C-wan-host ping -q -c 2 -i 0.2 -W 1 198.18.1.10 >/dev/null 2>&1"

    if [ "$round" = 1 ]; then
        it_log "firewall stop/start: plain kernel forwarding in between (perf-test --baseline kernel)"
        it_check "cluster firewall stop" "$SLUICE" cluster firewall stop --prefix "$C"
        it_check "no pipeline on fw0's lan0 any more" sh -c "! ip -n $C-fw0 link show lan0 | grep -q xdp && ! ip netns exec $C-fw0 tc filter show dev lan0 ingress | grep -q tc_main_prog"
        it_check "no pins for fw0" test ! -e "/sys/fs/bpf/sluice/netns/$C-fw0"
        it_check "the kernel forwards IPv4 LAN -> WAN" cl_ping "$C" 198.18.100.200
        it_check "the kernel forwards IPv6 LAN -> WAN" cl_ping "$C" 2001:2:0:100::200
        it_check "and WAN -> LAN (no firewall)" ip netns exec "$C-wan-host" ping -q -c 2 -i 0.2 -W 2 198.18.1.10
        it_check "cluster firewall start" "$SLUICE" cluster firewall start --prefix "$C"
        it_check "sluice's pipeline is back on fw0's lan0" it_pipeline_on "$C-fw0" lan0
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

it_log "half-built cluster: cluster up killed (SIGKILL) part-way, a stray process in a namespace it made"
"$SLUICE" cluster up --prefix "$C" >"$IT_TMP/killed-up.log" 2>&1 &
upid=$!
IT_PIDS+=("$upid")
it_wait_for "cluster up made $C-fw0" 300 test -e "/run/netns/$C-fw0"
kill -KILL "$upid" 2>/dev/null
wait "$upid" 2>/dev/null
it_check "the killed up left its namespace $C-fw0 behind" test -e "/run/netns/$C-fw0"
ip netns exec "$C-fw0" sleep 300 &
stray=$!
IT_PIDS+=("$stray")
# Whatever the killed up had started (sluice, iperf3) stays recorded in its state.
half_pids=$(cl_pids "$C" 2>/dev/null || true)
it_check "down on a half-built cluster succeeds" "$SLUICE" cluster down --prefix "$C"
# shellcheck disable=SC2086
cl_check_gone "$C" "$stray" $half_pids
it_check "a bad prefix is refused" sh -c "! '$SLUICE' cluster up --prefix 'Bad/Prefix' 2>/dev/null"
it_finish
