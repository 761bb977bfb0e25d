# The daemon-restart scenario shared by test_restart_sigkill.sh and
# test_restart_sigterm.sh: a long-lived TCP connection (tcp_chat.py) per
# family is open through sluice; the daemon is stopped with SIGNAL and started
# again; the same connection must still carry data, and `show sessions` must
# list the same flow with counters that kept growing (sessions live in pinned
# maps, so a restart loses none).

restart_scenario() {
    local signal=$1
    it_need_root_and_bpf
    it_topology_up
    it_write_config "$IT_TMP/fw.yaml"
    it_sluice_start "$IT_TMP/fw.yaml"

    it_server wan echo-server "$WAN4" 8083
    it_server wan echo-server "$WAN6" 8083
    chat_open v4 "$WAN4" 8083 || { it_fail "IPv4 chat connection opened"; it_finish; }
    chat_open v6 "$WAN6" 8083 || { it_fail "IPv6 chat connection opened"; it_finish; }
    # Many messages before, few after: counters that restarted from zero would
    # end up below the value seen before the restart.
    it_check "IPv4 connection exchanges 50 messages before the restart" chat_exchange v4 50 1000
    it_check "IPv6 connection exchanges 50 messages before the restart" chat_exchange v6 50 1000

    sluice_fw show sessions --json >"$IT_TMP/before.json"
    local fam src dst sport
    declare -A pf0 pr0 age0
    for fam in 4 6; do
        if [ $fam = 4 ]; then src=$LAN4 dst=$WAN4 sport=$CHAT_PORT_v4; else src=$LAN6 dst=$WAN6 sport=$CHAT_PORT_v6; fi
        read -r pf0[$fam] pr0[$fam] age0[$fam] <<<"$(session_field "$IT_TMP/before.json" tcp "$src" "$sport" "$dst" 8083 packets_forward packets_reply age_seconds)"
        it_expect_ge "IPv$fam session listed before the restart, forward packets" "${pf0[$fam]:-}" 50
    done

    it_log "stopping the daemon (pid $SLUICE_PID) with SIG$signal"
    local old=$SLUICE_PID rc
    kill -"$signal" "$old"
    wait "$old" 2>/dev/null
    rc=$?
    it_forget_pid "$old"
    if [ "$signal" = KILL ]; then
        it_expect_eq "daemon died of SIGKILL" 137 "$rc"
        it_check "the pipeline stays attached on lan0 after SIGKILL (the fast path keeps running)" \
            it_pipeline_on "$P-fw" lan0
    else
        it_expect_eq "daemon exited 0 on SIGTERM" 0 "$rc"
        it_check "daemon logged that it detached on SIGTERM" grep -q "stopping" "$SLUICE_LOG"
    fi
    sluice_fw show sessions --json >"$IT_TMP/between.json"
    it_expect_eq "IPv4 session still in the pinned table while the daemon is down" established \
        "$(session_field "$IT_TMP/between.json" tcp "$LAN4" "$CHAT_PORT_v4" "$WAN4" 8083 state)"

    it_log "starting sluice run again"
    it_sluice_start "$IT_TMP/fw.yaml"
    it_check "daemon reports sessions kept from the previous run" grep -q "sessions kept from the previous run" "$SLUICE_LOG"

    it_check "IPv4 connection still exchanges data after the restart" chat_exchange v4 10 1000
    it_check "IPv6 connection still exchanges data after the restart" chat_exchange v6 10 1000

    sluice_fw show sessions --json >"$IT_TMP/after.json"
    local pf1 pr1 age1 state
    for fam in 4 6; do
        if [ $fam = 4 ]; then src=$LAN4 dst=$WAN4 sport=$CHAT_PORT_v4; else src=$LAN6 dst=$WAN6 sport=$CHAT_PORT_v6; fi
        read -r state pf1 pr1 age1 <<<"$(session_field "$IT_TMP/after.json" tcp "$src" "$sport" "$dst" 8083 state packets_forward packets_reply age_seconds)"
        it_expect_eq "IPv$fam same flow [$src]:$sport -> [$dst]:8083 listed after the restart" established "${state:-missing}"
        it_expect_ge "IPv$fam forward packets continued (before ${pf0[$fam]} + 10 messages)" "${pf1:-}" $((${pf0[$fam]:-0} + 10))
        it_expect_ge "IPv$fam reply packets continued (before ${pr0[$fam]} + 10 echoes)" "${pr1:-}" $((${pr0[$fam]:-0} + 10))
        if "$IT_PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "${age1:-0}" "${age0[$fam]:-1e9}"; then
            it_pass "IPv$fam session age kept growing (${age0[$fam]}s -> ${age1}s: the same entry, not a new one)"
        else
            it_fail "IPv$fam session age kept growing" "age before ${age0[$fam]:-?}s, after ${age1:-?}s"
        fi
    done
    it_finish
}
