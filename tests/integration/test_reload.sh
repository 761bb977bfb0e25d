#!/usr/bin/env bash
# `sluice reload` re-reads the running instance's file: a change (permit a new
# port) takes effect for new flows; a bad file makes reload exit 1 with the
# FILE:LINE:COL error and the policy in force stays as it was. IPv4 and IPv6.
source "$(dirname "$0")/lib.sh"
it_init reload rl
it_need_root_and_bpf
it_topology_up
cfg="$IT_TMP/fw.yaml"
it_write_config "$cfg"
it_sluice_start "$cfg"
for dst in "$WAN4" "$WAN6"; do
    it_server wan accept-server "$dst" 8080
    it_server wan accept-server "$dst" 9090
    it_server wan accept-server "$dst" 7000
done

it_log "checking: before the reload tcp/9090 matches no policy (default deny)"
it_par_eq "IPv4 tcp/9090 times out" timeout probe lan "$WAN4" 9090 2
it_par_eq "IPv6 tcp/9090 times out" timeout probe lan "$WAN6" 9090 2
it_par_wait

it_log "reload with tcp/9090 added to application web"
it_write_config "$cfg" 9090
if sluice_fw reload >"$IT_TMP/reload1.out" 2>&1; then
    it_pass "sluice reload of the changed file exits 0 ($(head -n 1 "$IT_TMP/reload1.out"))"
else
    it_fail "sluice reload of the changed file exits 0" "$(cat "$IT_TMP/reload1.out")"
fi
it_expect_eq "IPv4 new flow to tcp/9090 now connects" connected "$(probe lan "$WAN4" 9090)"
it_expect_eq "IPv6 new flow to tcp/9090 now connects" connected "$(probe lan "$WAN6" 9090)"
it_expect_eq "IPv4 tcp/8080 still connects" connected "$(probe lan "$WAN4" 8080)"
it_check "the reply names the generation now active" grep -qE "^sluice: reloaded .* \(config generation [0-9]+\)$" "$IT_TMP/reload1.out"

it_log "reload is answered over the control socket, not through the state file"
state="/run/sluice/netns/$P-fw/default/state.json"
it_check "the daemon listens on its control socket" test -S "/run/sluice/netns/$P-fw/default/control.sock"
mv "$state" "$IT_TMP/state.json.away"
it_check "sluice reload works with state.json moved away" sluice_fw reload
it_check "... and the daemon wrote a new state.json" test -s "$state"

it_log "reload with a bad file (a policy names an unknown application)"
cp "$cfg" "$IT_TMP/good.yaml"
sed -i 's/application: \[blocked\]/application: [blocekd]/' "$cfg"
line=$(grep -n 'blocekd' "$cfg" | cut -d: -f1)
sluice_fw reload >"$IT_TMP/reload2.out" 2>"$IT_TMP/reload2.err"
rc=$?
it_expect_eq "sluice reload of a bad file exits 1" 1 "$rc"
if grep -qE "^$cfg:$line:[0-9]+: policies\[1\]\.application\[0\]: unknown application \"blocekd\"" "$IT_TMP/reload2.err"; then
    it_pass "reload prints FILE:LINE:COL: PATH: MESSAGE for the bad application"
else
    it_fail "reload prints FILE:LINE:COL: PATH: MESSAGE for the bad application" "stderr: $(cat "$IT_TMP/reload2.err")"
fi
it_check "daemon still running after the rejected reload" kill -0 "$SLUICE_PID"
it_par_eq "IPv4 tcp/9090 (permitted by the config in force) still connects" connected probe lan "$WAN4" 9090
it_par_eq "IPv6 tcp/9090 (permitted by the config in force) still connects" connected probe lan "$WAN6" 9090
it_par_eq "IPv4 tcp/7000 (denied by the config in force) still times out" timeout probe lan "$WAN4" 7000 2
it_par_eq "IPv6 tcp/7000 (denied by the config in force) still times out" timeout probe lan "$WAN6" 7000 2
it_par_wait

it_log "reload back to the original policy: tcp/9090 closes again for new flows"
it_write_config "$cfg"
it_check "sluice reload of the original file exits 0" sluice_fw reload
it_par_eq "IPv4 tcp/9090 times out again" timeout probe lan "$WAN4" 9090 2
it_par_eq "IPv6 tcp/9090 times out again" timeout probe lan "$WAN6" 9090 2
it_par_wait
it_finish
