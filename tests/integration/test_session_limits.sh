#!/usr/bin/env bash
# limits.sessions (docs/host-protection.md "Session table size"): the daemon
# creates the session maps at the configured size and `show stats` /
# `show sessions` report fill against it; a reload that changes the size is
# rejected with FILE:LINE:COL: limits.sessions and nothing of the file is
# applied; `run` over pins of another size refuses to start and names both
# sizes; after `sluice down` the new size starts.
source "$(dirname "$0")/lib.sh"
it_init session_limits sl
it_need_root_and_bpf
it_topology_up
cfg="$IT_TMP/fw.yaml"
write_limited_config() {  # write_limited_config SESSIONS [EXTRA_PORTS]
    it_write_config "$cfg" "${2:-}"
    echo "limits: { sessions: $1 }" >>"$cfg"
}
table_field() {  # table_field JSONFILE KEY...: a field of show stats' session_table
    "$IT_PY" -c 'import json,sys
d = json.load(open(sys.argv[1]))["session_table"]
for k in sys.argv[2:]: d = d[k]
print(d)' "$@"
}

write_limited_config 2048
it_sluice_start "$cfg"
it_server wan accept-server "$WAN4" 8080
it_server wan accept-server "$WAN4" 9090
it_expect_eq "IPv4 tcp/8080 connects" connected "$(probe lan "$WAN4" 8080)"

sluice_fw show stats --json >"$IT_TMP/stats1.json"
it_expect_eq "show stats: 2048 sessions per family" 2048 "$(table_field "$IT_TMP/stats1.json" sessions_per_family)"
it_expect_eq "show stats: 4096 entries per family" 4096 "$(table_field "$IT_TMP/stats1.json" entries_per_family)"
it_expect_ge "show stats: the probe's flow fills IPv4 entries" "$(table_field "$IT_TMP/stats1.json" ipv4 entries)" 2
sluice_fw show stats >"$IT_TMP/stats1.txt"
it_check "show stats ends with the table's fill" grep -qE '^session table: IPv4 [0-9]+ of 4096 entries \([0-9.]+%\), IPv6 [0-9]+ of 4096 entries' "$IT_TMP/stats1.txt"
sluice_fw show sessions --json >"$IT_TMP/sessions1.json"
it_expect_eq "show sessions --json: table capacity" 4096 \
    "$("$IT_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["table"]["entries_per_family"])' "$IT_TMP/sessions1.json")"

it_log "reload with limits.sessions changed (and tcp/9090 added): rejected, nothing applied"
write_limited_config 4096 9090
line=$(grep -n '^limits:' "$cfg" | cut -d: -f1)
sluice_fw reload >"$IT_TMP/reload.out" 2>"$IT_TMP/reload.err"
it_expect_eq "sluice reload exits 1" 1 "$?"
it_log "reload said: $(cat "$IT_TMP/reload.err")"
if grep -qF "$cfg:$line:21: limits.sessions: 4096 sessions, but the running session table holds 2048 sessions per family" "$IT_TMP/reload.err" &&
    grep -qF 'sluice down' "$IT_TMP/reload.err"; then
    it_pass "reload names file, line, field, both sizes and sluice down"
else
    it_fail "reload names file, line, field, both sizes and sluice down" "stderr: $(cat "$IT_TMP/reload.err")"
fi
it_check "daemon still running" kill -0 "$SLUICE_PID"
it_expect_eq "tcp/9090 (only in the rejected file) still times out" timeout "$(probe lan "$WAN4" 9090 2)"
it_expect_eq "tcp/8080 still connects" connected "$(probe lan "$WAN4" 8080)"
sluice_fw show stats --json >"$IT_TMP/stats2.json"
it_expect_eq "the table keeps 4096 entries per family" 4096 "$(table_field "$IT_TMP/stats2.json" entries_per_family)"

it_log "restart over the pinned 2048-session table with the 4096 file: refused"
it_stop "$SLUICE_PID"
it_forget_pid "$SLUICE_PID"
timeout 60 "$SLUICE" --netns "$P-fw" run -c "$cfg" >"$IT_TMP/run2.log" 2>&1
it_expect_eq "sluice run exits 1" 1 "$?"
it_log "run said: $(cat "$IT_TMP/run2.log")"
if grep -qF "holds 2048 sessions per family (4096 entries); the config asks for 4096 sessions per family (8192 entries) ($cfg:$line:21 limits.sessions)" "$IT_TMP/run2.log" &&
    grep -qF 'sluice down' "$IT_TMP/run2.log"; then
    it_pass "run names both sizes, file:line limits.sessions and sluice down"
else
    it_fail "run names both sizes, file:line limits.sessions and sluice down" "log: $(cat "$IT_TMP/run2.log")"
fi

it_log "sluice down, then run at the new size"
it_check "sluice down" sluice_fw down
it_sluice_start "$cfg"
sluice_fw show stats --json >"$IT_TMP/stats3.json"
it_expect_eq "the new table: 8192 entries per family" 8192 "$(table_field "$IT_TMP/stats3.json" entries_per_family)"
it_expect_eq "tcp/9090 (in the new file) connects" connected "$(probe lan "$WAN4" 9090)"
it_finish
