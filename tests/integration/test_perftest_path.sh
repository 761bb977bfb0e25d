#!/usr/bin/env bash
# perf-test never prints a sluice number that was measured without sluice:
# on a netns cluster whose fw0 runs sluice but has its pipeline detached
# (the daemon alive, so the cluster looks healthy), `perf-test compare`
# exits 1 with a message naming fw0 and what is missing, prints no table,
# and writes no history row; with sluice stopped, compare and `perf-test
# profile` are refused too. With sluice attached again both succeed, each
# proving sluice was in the path. `sluice cluster down` runs in the EXIT trap.
set -u
source "$(dirname "$0")/perftest_lib.sh"
pt_init perftest_path pp

UP=1
"$SLUICE" cluster up --prefix "$P" >"$TMP/cluster.log" 2>&1 || { cat "$TMP/cluster.log"; fail "cluster up failed"; }
fw="$P-fw0"
# The pipeline runs at TC ingress (the tc mode auto picks on veth) or at
# XDP: take it off both hooks (filter priority 0x51b = 1307 is the TC pipeline's).
for dev in lan0 wan0 fab0; do
    ip -n "$fw" link set dev "$dev" xdpgeneric off || fail "detaching XDP from $dev"
    if ip netns exec "$fw" tc filter show dev "$dev" ingress | grep -q tc_main_prog; then
        ip netns exec "$fw" tc filter del dev "$dev" ingress pref 1307 || fail "detaching the TC pipeline from $dev"
    fi
done
echo "[perftest_path] sluice's pipeline detached on $fw (daemon still running)"

"$SLUICE" perf-test compare --quick --baseline kernel --prefix "$P" --env netns --history "$TMP/history.csv" \
    >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
checks=0
expect() {  # expect DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok    $what"; checks=$((checks + 1)); else echo "--- stdout:"; cat "$TMP/out.txt"; echo "--- stderr:"; cat "$TMP/err.txt"; fail "$what"; fi
}
expect "perf-test exits 1" test "$rc" = 1
expect "the message names fw0 and the missing program" \
    grep -q "sluice IPv4 (pass 1) was not measured through sluice on fw0: before the run, sluice's pipeline (xdp_main_prog at XDP or tc_main_prog at TC ingress) is attached on no interface" "$TMP/err.txt"
expect "... and says no sluice number is reported" grep -q "perf-test reports no sluice number" "$TMP/err.txt"
expect "no throughput table is printed" sh -c "! grep -q 'Gbps' '$TMP/out.txt'"
expect "no history row is written" sh -c "[ ! -s '$TMP/history.csv' ] || [ \$(wc -l <'$TMP/history.csv') -le 1 ]"

# sluice stopped on the firewalls (`cluster firewall stop`): refused too.
"$SLUICE" cluster firewall stop --prefix "$P" >>"$TMP/cluster.log" 2>&1 || fail "cluster firewall stop"
"$SLUICE" perf-test compare --quick --prefix "$P" --env netns --history "$TMP/history.csv" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
expect "with sluice stopped, perf-test exits non-zero ($rc): $(head -n 1 "$TMP/err.txt")" test "$rc" != 0
expect "... and prints no throughput" sh -c "! grep -q 'Gbps' '$TMP/out.txt'"

# ... and so is a profile: refused before any traffic, no profile printed.
"$SLUICE" perf-test profile --quick --profile-seconds 2 --prefix "$P" --env netns >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
expect "with sluice stopped, perf-test profile exits 1" test "$rc" = 1
expect "... saying sluice is not in the path" \
    grep -q "the IPv4 profile was not measured through sluice on fw0: before the run" "$TMP/err.txt"
expect "... and that no profile is reported" grep -q "perf-test reports no profile" "$TMP/err.txt"
expect "... and prints no profile" sh -c "! grep -q 'samples' '$TMP/out.txt'"

# Started again (attached anew): the same run goes through, each number proven.
"$SLUICE" cluster firewall start --prefix "$P" >>"$TMP/cluster.log" 2>&1 || fail "cluster firewall start"
"$SLUICE" perf-test compare --quick --prefix "$P" --env netns --history "$TMP/history.csv" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
expect "with sluice attached, perf-test succeeds" test "$rc" = 0
expect "... proving both numbers in the path" test "$(grep -c '^in path: sluice attached on fw0' "$TMP/err.txt")" = 2
if command -v perf >/dev/null || ls /usr/bin/perf_* >/dev/null 2>&1; then
    "$SLUICE" perf-test profile --quick --profile-seconds 2 --prefix "$P" --env netns >"$TMP/out.txt" 2>"$TMP/err.txt"
    rc=$?
    expect "with sluice attached, perf-test profile succeeds" test "$rc" = 0
    expect "... proving the profiled traffic went through sluice" grep -q '^in path: sluice attached on fw0' "$TMP/err.txt"
    expect "... and prints the profile" grep -q 'ran through it (.* Gbps received, sluice in the path)' "$TMP/out.txt"
else
    echo "(perf is not installed: the profile with sluice attached is not run)"
fi
echo "PASS: perftest_path ($checks checks)"
