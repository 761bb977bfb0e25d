#!/usr/bin/env bash
# `sluice perf-test compare --quick --passes 2 --baseline nftables` on a fresh
# netns cluster: the baseline passes run with sluice detached and the nftables
# table loaded, interleaved (pass 1 sluice first, pass 2 the baseline first),
# a ratio per family comes out, and afterwards sluice is attached again on fw0
# and the nftables table is gone. No speed thresholds.
set -u
source "$(dirname "$0")/perftest_lib.sh"
pt_init perftest_baseline pb
command -v nft >/dev/null || skip "nft (nftables) is not installed"

UP=1
"$SLUICE" cluster up --prefix "$P" >"$TMP/cluster.log" 2>&1 || { cat "$TMP/cluster.log"; fail "cluster up failed"; }
pipeline_on() {  # sluice's pipeline at XDP or (the tc mode) at TC ingress
    ip -n "$P-fw0" -j link show lan0 | grep -q '"name":"xdp_main_prog"' ||
        ip netns exec "$P-fw0" tc -j filter show dev lan0 ingress 2>/dev/null | grep -q '"name":"tc_main_prog"'
}
pipeline_on || fail "sluice is not attached to $P-fw0 lan0 after cluster up"

echo "[perftest_baseline] perf-test compare --quick --passes 2 --baseline nftables --prefix $P --json"
"$SLUICE" perf-test compare --quick --passes 2 --baseline nftables --prefix "$P" --env netns --json \
    --no-history >"$TMP/out.json" 2>"$TMP/err.log" || { cat "$TMP/err.log"; fail "perf-test exited non-zero"; }
cat "$TMP/err.log"

pipeline_on || fail "sluice is not attached to lan0 after the run"
if ip netns exec "$P-fw0" nft list tables 2>/dev/null | grep -q sluice_perftest_baseline; then
    fail "the nftables baseline table is still loaded after the run"
fi
"$SLUICE" cluster status --prefix "$P" >"$TMP/status.txt" 2>&1 || { cat "$TMP/status.txt"; fail "cluster is not healthy after the run"; }

"$PY" - "$TMP/out.json" <<'PYEOF'
import json, sys
failures = []
def check(what, ok):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)
d = json.load(open(sys.argv[1]))
check("baseline is nftables", d.get("baseline") == "nftables")
check("every run succeeded", d.get("ok") is True)
order = [(r["pass"], r["config"], r["protocol"]) for r in sorted(d["runs"], key=lambda r: r["order"])]
expected = [(1, "sluice", "IPv4"), (1, "sluice", "IPv6"), (1, "nftables", "IPv4"), (1, "nftables", "IPv6"),
            (2, "nftables", "IPv4"), (2, "nftables", "IPv6"), (2, "sluice", "IPv4"), (2, "sluice", "IPv6")]
check("passes interleaved, alternating which goes first", order == expected)
for row in d["table"]:
    ratio = row.get("ratio") or {}
    check("%s has two per-pass ratios" % row["protocol"], ratio.get("count") == 2 and ratio.get("median", 0) > 0)
    check("%s baseline throughput non-zero" % row["protocol"], (row.get("baseline_gbps") or {}).get("median", 0) > 0)
if failures:
    print("FAIL: perftest_baseline: %d check(s) failed" % len(failures))
    sys.exit(1)
print("PASS: perftest_baseline")
PYEOF
