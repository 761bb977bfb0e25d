#!/usr/bin/env bash
# `sluice perf-test compare --quick --json` on a fresh netns cluster: the
# table has an IPv4 and an IPv6 row with non-zero throughput and a gap; the
# run leaves the cluster as it found it. No speed thresholds: any non-zero
# rate passes. `sluice cluster down` runs in the EXIT trap.
set -u
source "$(dirname "$0")/perftest_lib.sh"
pt_init perftest_quick pq

echo "[perftest_quick] cluster up --prefix $P"
UP=1
if ! "$SLUICE" cluster up --prefix "$P" >"$TMP/cluster.log" 2>&1; then
    echo "FAIL: perftest_quick: cluster up failed:"
    cat "$TMP/cluster.log"
    exit 1
fi

echo "[perftest_quick] perf-test compare --quick --prefix $P --json"
if ! "$SLUICE" perf-test compare --quick --prefix "$P" --json --env netns \
        --history "$TMP/history.csv" >"$TMP/out.json" 2>"$TMP/err.log"; then
    echo "FAIL: perftest_quick: perf-test exited non-zero; stderr:"
    cat "$TMP/err.log"
    echo "stdout:"
    cat "$TMP/out.json"
    exit 1
fi
cat "$TMP/err.log"
# Each sluice number is proven to have gone through sluice (path_check.h).
n=$(grep -c '^in path: sluice attached on fw0 (.*lan0.*wan0.*), rx +[0-9]* packets (at least [0-9]* needed)$' "$TMP/err.log")
[ "$n" = 2 ] || { echo "FAIL: perftest_quick: expected 2 \"in path\" proofs (IPv4, IPv6), got $n"; exit 1; }
echo "ok    both runs proved sluice in the path (attached on lan0 and wan0, rx counter moved enough)"

echo "[perftest_quick] perf-test history --svg"
"$SLUICE" perf-test history --history "$TMP/history.csv" --svg "$TMP/history.svg" >"$TMP/history.txt" 2>&1 \
    || { cat "$TMP/history.txt"; echo "FAIL: perftest_quick: perf-test history failed"; exit 1; }
grep -q "| netns " "$TMP/history.txt" || { cat "$TMP/history.txt"; echo "FAIL: perftest_quick: no netns row in the history"; exit 1; }
if command -v rsvg-convert >/dev/null; then
    rsvg-convert -o "$TMP/history.png" "$TMP/history.svg" || { echo "FAIL: perftest_quick: the chart does not render"; exit 1; }
    echo "ok    the history chart renders (rsvg-convert)"
elif command -v xmllint >/dev/null; then
    xmllint --noout "$TMP/history.svg" || { echo "FAIL: perftest_quick: the chart is not well-formed XML"; exit 1; }
    echo "ok    the history chart is well-formed XML (xmllint)"
fi

"$PY" - "$TMP/out.json" "$TMP/history.csv" <<'PYEOF'
import csv, json, sys
failures = []
def check(what, ok):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)

d = json.load(open(sys.argv[1]))
check("environment is netns", d.get("environment") == "netns")
check("quick run, one pass", d.get("quick") is True and d.get("passes") == 1)
check("every run succeeded", d.get("ok") is True)
table = d.get("table", [])
check("table rows are IPv4 then IPv6", [r.get("protocol") for r in table] == ["IPv4", "IPv6"])
for row in table:
    tp = row.get("throughput_gbps") or {}
    check("%s throughput is non-zero" % row.get("protocol"), (tp.get("median") or 0) > 0)
    check("%s has retransmits and an expected baseline" % row.get("protocol"),
          isinstance(row.get("retransmits"), dict) and "describe" in (row.get("expected") or {}))
check("gap is a number", isinstance(d.get("gap_percent"), (int, float)))
runs = d.get("runs", [])
check("two iperf3 runs, both through sluice",
      len(runs) == 2 and all(r.get("config") == "sluice" and r.get("receiver_bps", 0) > 0 for r in runs))
rows = list(csv.DictReader(open(sys.argv[2])))
check("one history row written", len(rows) == 1 and rows[0]["environment"] == "netns" and rows[0]["quick"] == "yes")
if failures:
    print("FAIL: perftest_quick: %d check(s) failed" % len(failures))
    sys.exit(1)
print("PASS: perftest_quick")
PYEOF
