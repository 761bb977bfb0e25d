#!/usr/bin/env bash
# The README's main-job command (run as root on Debian 12): install, build,
# then measure TCP throughput LAN host -> WAN host through the firewall
# namespace, IPv4 and IPv6, with plain kernel forwarding and through sluice
# (XDP/TC), interleaved over several rounds; prints a table of medians and
# spreads. iperf3 results are read from its JSON (-J), never from its text.
#
# Knobs (environment): ROUNDS (3), DURATION seconds per run (5), PARALLEL
# streams (4), SKIP_SETUP=1 / SKIP_BUILD=1 to reuse an existing build/
# (SLUICE_BIN=PATH to use another binary).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
PARALLEL=${PARALLEL:-4}
PY=/usr/bin/python3

[ "${SKIP_SETUP:-0}" = 1 ] || bash scripts/setup.sh
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
    cmake --build build -j"$(nproc)" --target sluice
fi
SLUICE=${SLUICE_BIN:-$ROOT/build/userspace/sluice}

source scripts/lib/topology.sh
P="mj-$$"                       # unique per run: namespaces mj-<pid>-lan/fw/wan
TMP=$(mktemp -d /tmp/sluice-main-job.XXXXXX)
PIDS=()
UP=0

cleanup() {
    local rc=$? pid
    set +e
    for pid in "${PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
    done
    if [ "$UP" = 1 ]; then
        "$SLUICE" --netns "$P-fw" down >/dev/null 2>&1
        topology_down "$P"
    fi
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

echo "main-job: topology $P-lan / $P-fw / $P-wan"
UP=1
topology_up "$P"

cat >"$TMP/fw.yaml" <<'YAML'
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
YAML
"$SLUICE" check -c "$TMP/fw.yaml"

sluice_start() {
    "$SLUICE" --netns "$P-fw" run -c "$TMP/fw.yaml" >>"$TMP/sluice.log" 2>&1 &
    SLUICE_PID=$!
    PIDS+=("$SLUICE_PID")
    local i
    for i in $(seq 150); do
        grep -q "running (pid $SLUICE_PID)" "$TMP/sluice.log" && return 0
        kill -0 "$SLUICE_PID" 2>/dev/null || break
        sleep 0.2
    done
    echo "main-job: sluice did not start:" >&2
    cat "$TMP/sluice.log" >&2
    exit 1
}

sluice_stop() {
    "$SLUICE" --netns "$P-fw" down >>"$TMP/sluice.log" 2>&1 || { cat "$TMP/sluice.log" >&2; exit 1; }
    wait "$SLUICE_PID" 2>/dev/null || true
}

# iperf_run OUTFILE DEST: one iperf3 server (-s -1, one test) on the WAN host,
# stopped by PID if still there; the client on the LAN host writes JSON.
iperf_run() {
    local out=$1 dst=$2 spid i
    ip netns exec "$P-wan" iperf3 -s -1 -p 5201 >"$TMP/iperf3-server.log" 2>&1 &
    spid=$!
    PIDS+=("$spid")
    for i in $(seq 100); do
        [ -n "$(ip netns exec "$P-wan" ss -Hltn 'sport = :5201')" ] && break
        sleep 0.1
    done
    ip netns exec "$P-lan" iperf3 -c "$dst" -p 5201 -t "$DURATION" -P "$PARALLEL" -J >"$out" || true
    kill -0 "$spid" 2>/dev/null && kill -TERM "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null || true
}

ip netns exec "$P-lan" ping -q -c 2 -W 2 198.18.100.200 >/dev/null
ip netns exec "$P-lan" ping -q -c 2 -W 2 2001:2:0:100::200 >/dev/null

for r in $(seq "$ROUNDS"); do
    echo "main-job: round $r/$ROUNDS: kernel forwarding IPv4, IPv6 (${DURATION}s, -P $PARALLEL each)"
    iperf_run "$TMP/kernel-ipv4-$r.json" 198.18.100.200
    iperf_run "$TMP/kernel-ipv6-$r.json" 2001:2:0:100::200
    echo "main-job: round $r/$ROUNDS: through sluice IPv4, IPv6"
    sluice_start
    iperf_run "$TMP/sluice-ipv4-$r.json" 198.18.100.200
    iperf_run "$TMP/sluice-ipv6-$r.json" 2001:2:0:100::200
    "$SLUICE" --netns "$P-fw" show stats --json >"$TMP/stats-$r.json"
    "$SLUICE" --netns "$P-fw" show zones >"$TMP/zones.txt"
    sluice_stop
done

echo
echo "sluice attachment: $(tr '\n' ' ' <"$TMP/zones.txt")"
"$PY" - "$TMP" "$ROUNDS" "$DURATION" "$PARALLEL" <<'PYEOF'
import json, statistics, sys
tmp, rounds, duration, parallel = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
failed = False

def gbps(path):
    global failed
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as e:
        failed = True
        return None, "no JSON (%s)" % e
    if "error" in d:
        failed = True
        return None, d["error"]
    return d["end"]["sum_received"]["bits_per_second"] / 1e9, ""

rows = []
for path, label in (("kernel", "kernel forwarding"), ("sluice", "sluice (XDP/TC)")):
    cells = []
    for fam in ("ipv4", "ipv6"):
        vals, errs = [], []
        for r in range(1, rounds + 1):
            v, err = gbps("%s/%s-%s-%d.json" % (tmp, path, fam, r))
            (vals.append(v) if v is not None else errs.append(err))
        if vals:
            cell = "%6.2f  (%.2f-%.2f)" % (statistics.median(vals), min(vals), max(vals))
        else:
            cell = "failed"
        if errs:
            cell += "  [%d failed: %s]" % (len(errs), errs[0])
        cells.append(cell)
    rows.append((label, cells))

# Where sluice's packets went (per round: the instance starts fresh each round).
fast = []
for r in range(1, rounds + 1):
    try:
        d = json.load(open("%s/stats-%d.json" % (tmp, r)))
        c, kinds = d["counters"], d["kinds"]
        passed = {k: v for k, v in c.items() if kinds.get(k) == "pass" and v}
        drops = {k: v for k, v in c.items() if kinds.get(k) == "drop" and v}
        fast.append("round %d: rx %d, forward (XDP redirect) %d, to kernel %s, dropped %s"
                    % (r, c.get("rx", 0), c.get("forward", 0), passed or 0, drops or 0))
    except (OSError, ValueError, KeyError):
        fast.append("round %d: no stats" % r)

print("TCP throughput LAN host -> WAN host, Gbit/s received: median (min-max) of %d runs, "
      "iperf3 -t %s -P %s" % (rounds, duration, parallel))
print("%-20s %-30s %-30s" % ("path", "IPv4", "IPv6"))
for label, cells in rows:
    print("%-20s %-30s %-30s" % (label, cells[0], cells[1]))
print("sluice counters (packets as XDP saw them; GSO/GRO aggregates count once):")
for line in fast:
    print("  " + line)
sys.exit(1 if failed else 0)
PYEOF
