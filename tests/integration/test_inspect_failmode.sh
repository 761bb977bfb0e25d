#!/usr/bin/env bash
# The inspection stage going away: `sluice inspect stop|start` and a daemon
# killed with SIGKILL. IPv4 and IPv6, TCP and UDP.
#
#   strict (fail-mode closed, the default): tcp/8080, udp/5353
#   soft   (fail-mode open):                tcp/8081, udp/5354
#   plain permit (never punted):            tcp/9000 (echo), tcp/9001 (a long
#                                           paced transfer across every phase)
#   both rulesets reject 'malware[0-9]+' in either direction.
#
# inspect stop: strict's new flows (TCP and UDP) and its open ones are blocked
# (nothing more reaches the server; fail_closed_packets and
# drop-inspect-stage-down grow); soft's new flows pass uninspected
# (fail_open_packets, inspect-stage-down-fail-open grow). inspect start:
# new flows of both are inspected again; soft flows released while the stage
# was down stay on the fast path for good. SIGKILL: XDP and TC stay attached,
# tc_punt_prog finds no stage socket: strict's new flows are dropped
# (drop-punt-no-socket, no_socket_packets), soft's pass (fail-open counters).
# The plain flows are byte-exact and never reset throughout; lib.sh's cleanup
# runs `sluice down` after the kill.
source "$(dirname "$0")/lib.sh"
it_init inspect_failmode if
it_need_root_and_bpf
it_topology_up

source "$IT_DIR/inspect_flows_lib.sh"

# tcp_line ADDR PORT SPEC...: one short connection; prints "STATE SENT RECEIVED".
tcp_line() {
    local addr=$1 port=$2 a=() s
    shift 2
    for s in "$@"; do a+=(--send "$s"); done
    lan "$IT_PY" "$FLOWS" tcp --host "$addr" --port "$port" --timeout 3 "${a[@]}" | awk '{print $1, $2, $3}'
}
# plain_ok TAG: one echoed exchange on each plain (permit) connection, and
# the paced plain transfers moved on since the last call.
declare -A STREAM_SEEN=([4]=0 [6]=0) STREAM_PID=()
plain_ok() {
    local f sport seen st n
    for f in 4 6; do
        sport=$(awk '/^accept /{print $2; exit}' "$IT_TMP/st$f.ev" 2>/dev/null)
        seen=${STREAM_SEEN[$f]}
        st=$(fctl "st$f" wait "${sport:-0}" $((seen + 1)) 5)
        if [ "$(word "$st" 1)" = ok ] && [ "$(word "$st" 2)" = open ]; then
            it_pass "IPv$f plain transfer still flowing ($1): $seen -> $(word "$st" 3) bytes"
        else
            it_fail "IPv$f plain transfer still flowing ($1)" "server: $st"
        fi
        n=$(word "$st" 3)
        [[ $n =~ ^[0-9]+$ ]] || n=$seen
        STREAM_SEEN[$f]=$n
        if fok "PL$f" send fill:2000 && fok "PL$f" expect fill:2000 5; then
            it_pass "IPv$f plain permit connection: 2000 bytes echoed intact ($1)"
        else
            it_fail "IPv$f plain permit connection: 2000 bytes echoed intact ($1)" "$(tail -n 2 "$IT_TMP/PL$f.ev")"
        fi
    done
}

cfg="$IT_TMP/fw.yaml"
it_write_topology_config "$cfg"
cat >>"$cfg" <<'EOF'
applications:
  strict-tcp: { protocol: tcp, destination-port: 8080 }
  strict-udp: { protocol: udp, destination-port: 5353 }
  soft-tcp: { protocol: tcp, destination-port: 8081 }
  soft-udp: { protocol: udp, destination-port: 5354 }
  plain: { protocol: tcp, destination-port: [9000, 9001] }
policies:
  - { name: to-strict, from: trust, to: untrust, application: [strict-tcp, strict-udp], action: { inspect: strict } }
  - { name: to-soft, from: trust, to: untrust, application: [soft-tcp, soft-udp], action: { inspect: soft } }
  - { name: plain, from: trust, to: untrust, application: [plain], action: permit }
default-action: deny
inspect:
  rulesets:
    strict:
      patterns:
        - { name: bad, regex: 'malware[0-9]+', direction: both, action: reject }
    soft:
      fail-mode: open
      patterns:
        - { name: bad, regex: 'malware[0-9]+', direction: both, action: reject }
EOF
it_sluice_start "$cfg"
for f in 4 6; do
    dst=$(wan_addr $f)
    flows_server "c$f" wan "$dst" 8080 --echo
    flows_server "o$f" wan "$dst" 8081 --echo
    flows_server "pl$f" wan "$dst" 9000 --echo
    flows_server "st$f" wan "$dst" 9001
    flows_udp_echo "uc$f" wan "$dst" 5353
    flows_udp_echo "uo$f" wan "$dst" 5354
done

it_log "stage up: both rulesets inspect"
for f in 4 6; do
    dst=$(wan_addr $f)
    it_expect_eq "IPv$f strict: malware1 is reset" reset "$(tcp_once "$dst" 8080 fill:10+text:malware1)"
    it_expect_eq "IPv$f soft: malware1 is reset" reset "$(tcp_once "$dst" 8081 fill:10+text:malware1)"
    it_expect_eq "IPv$f strict UDP: clean echoed, malware dropped" "echoed timeout" \
        "$(udp_send "$dst" 5353 4610$f fill:10 text:malware1)"
    it_expect_eq "IPv$f soft UDP: clean echoed, malware dropped" "echoed timeout" \
        "$(udp_send "$dst" 5354 4620$f fill:10 text:malware1)"
done

it_log "opening long-lived flows: plain transfer, plain echo, strict OC, soft OS, UDP flows"
for f in 4 6; do
    dst=$(wan_addr $f)
    it_bg "stream$f" ip netns exec "$P-lan" "$IT_PY" "$FLOWS" stream --host "$dst" --port 9001 \
        --stop "$IT_TMP/stream$f.stop" --result "$IT_TMP/stream$f.result" --chunk 8192 --interval 0.02
    STREAM_PID[$f]=$IT_LAST_PID
    flows_client "PL$f" "$dst" 9000
    flows_client "OC$f" "$dst" 8080
    flows_client "OS$f" "$dst" 8081
    for c in OC OS; do
        if fok "$c$f" send fill:100 && fok "$c$f" expect fill:100 5; then
            it_pass "IPv$f $c: 100 bytes echoed through the stage"
        else
            it_fail "IPv$f $c: 100 bytes echoed through the stage" "$(tail -n 2 "$IT_TMP/$c$f.ev")"
        fi
    done
    it_expect_eq "IPv$f UDP strict flow UC (sport 4630$f) echoed" echoed "$(udp_send "$dst" 5353 4630$f fill:20)"
    it_expect_eq "IPv$f UDP soft flow US (sport 4640$f) echoed" echoed "$(udp_send "$dst" 5354 4640$f fill:20)"
done
plain_ok "stage up"
snap up

it_log "sluice inspect stop"
if sluice_fw inspect stop >"$IT_TMP/stop.out" 2>&1; then
    it_pass "sluice inspect stop exits 0"
else
    it_fail "sluice inspect stop exits 0" "$(cat "$IT_TMP/stop.out")"
fi
snap stopped0
it_expect_eq "show inspect: stage not running" false "$(insp "$IT_TMP/stopped0.insp" - stage.running)"
it_expect_eq "show inspect: held by the operator" true "$(insp "$IT_TMP/stopped0.insp" - stage.held_by_operator)"
it_expect_eq "show inspect: the datapath sees the stage down" false \
    "$(insp "$IT_TMP/stopped0.insp" - stage.datapath_sees_stage_up)"
for f in 4 6; do
    dst=$(wan_addr $f); poc=$(cport OC$f)
    it_expect_eq "IPv$f strict, stage stopped: a new TCP flow times out" timeout "$(probe lan "$dst" 8080 2)"
    it_expect_eq "IPv$f strict, stage stopped: a new UDP flow is dropped" timeout \
        "$(udp_send "$dst" 5353 4650$f fill:10)"
    it_expect_eq "IPv$f strict, stage stopped: the open UDP flow UC is dropped" timeout \
        "$(udp_send "$dst" 5353 4630$f fill:10)"
    fctl "OC$f" send fill:50 >/dev/null
    st=$(fctl "OC$f" expect fill:50 1)
    it_expect_eq "IPv$f strict, stage stopped: the open connection OC gets no echo" fail "$(word "$st" 1)"
    st=$(fctl "c$f" wait "$poc" 101 2)
    it_expect_eq "IPv$f strict, stage stopped: OC's 50 new bytes never reach the server (it has 100)" 100 \
        "$(word "$st" 3)"
    # The stage's end must not look like the peer's orderly end: a FIN would
    # tell the server the client finished its request (and the client that the
    # answer was complete) when the stream was cut.
    it_check "IPv$f strict, stage stopped: OC's server side is not ended by an orderly EOF (state: $(word "$st" 2))" \
        test "$(word "$st" 2)" != eof
    st=$(fctl "OC$f" state 1)
    it_check "IPv$f strict, stage stopped: OC's client is not ended by an orderly EOF (state: $(word "$st" 2))" \
        test "$(word "$st" 2)" != eof

    it_expect_eq "IPv$f soft, stage stopped: a new TCP flow passes, uninspected (malware2 echoed: state sent received)" \
        "eof 18 18" "$(tcp_line "$dst" 8081 fill:10+text:malware2)"
    flows_client "OSN$f" "$dst" 8081
    if fok "OSN$f" send fill:30 && fok "OSN$f" expect fill:30 5; then
        it_pass "IPv$f soft, stage stopped: a long-lived connection OSN opens and echoes"
    else
        it_fail "IPv$f soft, stage stopped: a long-lived connection OSN opens and echoes" "$(tail -n 2 "$IT_TMP/OSN$f.ev")"
    fi
    it_expect_eq "IPv$f soft, stage stopped: a new UDP flow (sport 4660$f) passes malware3 uninspected" echoed \
        "$(udp_send "$dst" 5354 4660$f text:malware3)"
    it_expect_eq "IPv$f soft, stage stopped: the open UDP flow US passes" echoed \
        "$(udp_send "$dst" 5354 4640$f fill:10)"
done
plain_ok "stage stopped"
snap stopped
it_expect_ge "strict fast_path.fail_closed_packets grew (at least 2 SYNs and 4 datagrams; delta)" \
    "$(idelta up stopped strict fast_path.fail_closed_packets)" 6
it_expect_ge "drop-inspect-stage-down grew (delta)" "$(sdelta up stopped drop-inspect-stage-down)" 6
it_expect_eq "strict fast_path.fail_open_packets did not grow (delta)" 0 \
    "$(idelta up stopped strict fast_path.fail_open_packets)"
it_expect_ge "soft fast_path.fail_open_packets grew (3 new flows and US, v4+v6; delta)" \
    "$(idelta up stopped soft fast_path.fail_open_packets)" 8
it_expect_ge "inspect-stage-down-fail-open grew (delta)" "$(sdelta up stopped inspect-stage-down-fail-open)" 8
it_expect_eq "soft fast_path.fail_closed_packets did not grow (delta)" 0 \
    "$(idelta up stopped soft fast_path.fail_closed_packets)"
it_expect_eq "soft: no connection reached the stopped stage (stage.connections delta)" 0 \
    "$(idelta up stopped soft stage.connections)"

it_log "sluice inspect start"
if sluice_fw inspect start >"$IT_TMP/start.out" 2>&1; then
    it_pass "sluice inspect start exits 0"
else
    it_fail "sluice inspect start exits 0" "$(cat "$IT_TMP/start.out")"
fi
snap started0
it_expect_eq "show inspect: stage running again" true "$(insp "$IT_TMP/started0.insp" - stage.running)"
it_expect_eq "show inspect: the datapath sees the stage up" true \
    "$(insp "$IT_TMP/started0.insp" - stage.datapath_sees_stage_up)"
for f in 4 6; do
    dst=$(wan_addr $f)
    it_expect_eq "IPv$f strict after start: a clean new flow passes" eof "$(tcp_once "$dst" 8080 fill:10)"
    it_expect_eq "IPv$f strict after start: malware4 is reset" reset "$(tcp_once "$dst" 8080 text:malware4)"
    it_expect_eq "IPv$f soft after start: malware4 is reset (inspected again)" reset \
        "$(tcp_once "$dst" 8081 text:malware4)"
    it_expect_eq "IPv$f UDP after start, new flows: strict clean echoed, strict malware dropped, soft malware dropped" \
        "echoed timeout timeout" \
        "$(udp_send "$dst" 5353 4670$f fill:10 text:malware4) $(udp_send "$dst" 5354 4680$f text:malware4)"
    if fok "OSN$f" send text:malware5 && fok "OSN$f" expect text:malware5 5; then
        it_pass "IPv$f soft OSN (released while stopped) stays on the fast path: malware5 echoed"
    else
        it_fail "IPv$f soft OSN (released while stopped) stays on the fast path: malware5 echoed" \
            "$(tail -n 2 "$IT_TMP/OSN$f.ev")"
    fi
    it_expect_eq "IPv$f soft UDP flow opened while stopped (sport 4660$f) stays on the fast path: malware6 echoed" \
        echoed "$(udp_send "$dst" 5354 4660$f text:malware6)"
    it_expect_eq "IPv$f soft UDP flow US, released while stopped, stays on the fast path: malware6 echoed" \
        echoed "$(udp_send "$dst" 5354 4640$f text:malware6)"
    it_expect_eq "IPv$f strict UDP flow UC (from before the stop) is inspected again: clean echoed, malware dropped" \
        "echoed timeout" "$(udp_send "$dst" 5353 4630$f fill:10 text:malware6)"
done
plain_ok "stage started again"
snap started
it_expect_eq "soft stage.connections since start: only the malware4 connections (OSN stays off the stage)" 2 \
    "$(idelta started0 started soft stage.connections)"

it_log "crash: SIGKILL the daemon (pid $SLUICE_PID) with the stage up"
for f in 4 6; do
    dst=$(wan_addr $f)
    flows_client "OC2$f" "$dst" 8080
    if fok "OC2$f" send fill:100 && fok "OC2$f" expect fill:100 5; then
        it_pass "IPv$f strict OC2 echoes before the crash"
    else
        it_fail "IPv$f strict OC2 echoes before the crash" "$(tail -n 2 "$IT_TMP/OC2$f.ev")"
    fi
done
snap precrash
kill -KILL "$SLUICE_PID"
wait "$SLUICE_PID" 2>/dev/null
it_forget_pid "$SLUICE_PID"
it_check "the daemon is gone" test ! -e "/proc/$SLUICE_PID"
for f in 4 6; do
    dst=$(wan_addr $f); poc2=$(cport OC2$f)
    it_expect_eq "IPv$f strict after the crash: a new TCP flow times out" timeout "$(probe lan "$dst" 8080 2)"
    it_expect_eq "IPv$f strict after the crash: a new UDP flow is dropped" timeout \
        "$(udp_send "$dst" 5353 4690$f fill:10)"
    fctl "OC2$f" send fill:40 >/dev/null
    st=$(fctl "c$f" wait "$poc2" 101 2)
    it_expect_eq "IPv$f strict after the crash: OC2's new bytes never reach the server (it has 100)" 100 \
        "$(word "$st" 3)"
    it_expect_eq "IPv$f soft after the crash: a new TCP flow passes uninspected (malware7 echoed: state sent received)" \
        "eof 8 8" "$(tcp_line "$dst" 8081 text:malware7)"
    it_expect_eq "IPv$f soft after the crash: a new UDP flow passes uninspected (malware7)" echoed \
        "$(udp_send "$dst" 5354 4700$f text:malware7)"
done
plain_ok "daemon killed"
snap crashed
it_expect_ge "strict fast_path.no_socket_packets grew (at least a SYN and a datagram per family; delta)" \
    "$(idelta precrash crashed strict fast_path.no_socket_packets)" 4
it_expect_ge "drop-punt-no-socket grew (delta)" "$(sdelta precrash crashed drop-punt-no-socket)" 4
it_expect_eq "strict fast_path.fail_open_packets did not grow (delta)" 0 \
    "$(idelta precrash crashed strict fast_path.fail_open_packets)"
it_expect_ge "soft fast_path.fail_open_packets grew (a SYN and a datagram, v4+v6; delta)" \
    "$(idelta precrash crashed soft fast_path.fail_open_packets)" 4
it_expect_ge "inspect-stage-down-fail-open grew (delta)" "$(sdelta precrash crashed inspect-stage-down-fail-open)" 4
it_expect_eq "soft fast_path.no_socket_packets did not grow (delta)" 0 \
    "$(idelta precrash crashed soft fast_path.no_socket_packets)"
it_expect_eq "show inspect after the crash: the dead daemon's stage is not reported running" false \
    "$(insp "$IT_TMP/crashed.insp" - stage.running)"

it_log "the plain transfers: byte-exact, never reset"
for f in 4 6; do
    touch "$IT_TMP/stream$f.stop"
done
for f in 4 6; do
    spid=${STREAM_PID[$f]}
    it_wait_for "stream $f result" 100 test -f "$IT_TMP/stream$f.result"
    it_stop "$spid"
    read -r cstate cbytes csha <"$IT_TMP/stream$f.result" 2>/dev/null || cstate=none
    sport=$(awk '/^accept /{print $2; exit}' "$IT_TMP/st$f.ev")
    st=$(fctl "st$f" end "$sport" 5)
    it_expect_eq "IPv$f plain transfer: the client ended by EOF" eof "$cstate"
    it_expect_eq "IPv$f plain transfer: the server ended by EOF" eof "$(word "$st" 2)"
    it_expect_eq "IPv$f plain transfer: the server got every byte the client sent" "$cbytes $csha" \
        "$(word "$st" 3) $(word "$st" 4)"
done
it_finish
