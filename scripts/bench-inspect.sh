#!/usr/bin/env bash
# sluice inspection-stage benchmark, one run (docs/inspect-bench.md):
#   (a) iperf3 TCP throughput LAN host -> WAN host through the firewall
#       namespace: kernel forwarding (nothing attached) vs the sluice fast path
#       (a `permit` policy) vs the inspected path (`inspect: bench`, a small
#       ruleset that does not match iperf3's traffic) vs the inspected path
#       with a hand-off (`inspect: bench-handoff`, the same patterns
#       client-to-server only, `inspect-bytes: 64KiB`: the stage scans the
#       first 64 KiB of each data connection and hands it back to XDP),
#       IPv4 and IPv6;
#   (b) the inspected path's throughput (IPv4) as the ruleset grows (1, 10,
#       50, 100, 1000 patterns by default; `sluice reload` between points),
#       with the fast path and kernel forwarding measured in the same passes,
#       and the stage's scanner alone on the same rulesets (tests/bench/scan_rate:
#       compile time, scan rate of one core, no sockets);
#   (c) short connections per second (open, one small request, one small
#       response, close; tests/bench/connrate) on the first three paths (a
#       short connection never reaches inspect-bytes, so it is never handed off).
# Passes are interleaved: every pass measures every path, and the order
# alternates from pass to pass. Cells are median (min–max) over passes;
# ratios are per pass, against the fast path of the same pass.
#
# usage: scripts/bench-inspect.sh [--build DIR] [--out FILE] [--svg FILE] [--passes N] [--passes-a N]
#                                 [--time S] [--streams N] [--counts "1 10 50 100 1000"]
#                                 [--small N] [--conn-time S] [--conn-concurrency N]
#                                 [--skip-a] [--skip-b] [--skip-c]
#
#   --build DIR          build tree with userspace/sluice, tests/sluice_connrate and
#                        tests/sluice_scan_rate
#                        (default: $SLUICE_BUILD_DIR or <repo>/build)
#   --out FILE           the markdown report (default: <build>/inspect-bench.md)
#   --svg FILE           the chart of (b) (default: <build>/inspect-bench.svg; pass
#                        docs/inspect-bench.svg to record a run in the docs)
#   --passes N           passes of each part (default 3; (a) 4, see --passes-a)
#   --passes-a N         passes of (a) (default: 4, or N of --passes when given;
#                        (a) rotates 4 paths, so a multiple of 4 is fair)
#   --time S, --streams N   iperf3 -t and -P (default 5, 4)
#   --counts "..."       the pattern counts of (b) (default "1 10 50 100 1000")
#   --small N            patterns in the ruleset of (a) and (c) (default 10)
#   --conn-time S        seconds counted per short-connection run (default 3,
#                        after 0.5 s of warm-up)
#   --conn-concurrency N connections in flight per client thread (2 threads;
#                        default 32)
#
# Needs root. Traffic stays inside namespaces this script creates, addressed
# from 198.18.0.0/15 and 2001:2::/48. Everything it starts is stopped by PID;
# the EXIT trap runs `sluice down` and deletes the namespaces.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLUICE_BUILD_DIR:-$REPO/build}
OUT=""
SVG=""
PASSES=3
PASSES_A=""        # (a)'s passes: 4 by default, --passes N when only that is given
PASSES_SET=0
TIME=5
STREAMS=4
COUNTS="1 10 50 100 1000"
SMALL=10
CONN_TIME=3
CONN_WARMUP=0.5
CONN_CONCURRENCY=32
CONN_THREADS=2
RUN_A=1
RUN_B=1
RUN_C=1
PY=/usr/bin/python3

usage() { sed -n '2,/^set -e/{/^set -e/!p}' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case $1 in
        --build) BUILD=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --svg) SVG=$2; shift 2 ;;
        --passes) PASSES=$2; PASSES_SET=1; shift 2 ;;
        --passes-a) PASSES_A=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --streams) STREAMS=$2; shift 2 ;;
        --counts) COUNTS=$2; shift 2 ;;
        --small) SMALL=$2; shift 2 ;;
        --conn-time) CONN_TIME=$2; shift 2 ;;
        --conn-concurrency) CONN_CONCURRENCY=$2; shift 2 ;;
        --skip-a) RUN_A=0; shift ;;
        --skip-b) RUN_B=0; shift ;;
        --skip-c) RUN_C=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-inspect.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$OUT" ] || OUT=$BUILD/inspect-bench.md
[ -n "$SVG" ] || SVG=$BUILD/inspect-bench.svg
if [ -z "$PASSES_A" ]; then
    if [ "$PASSES_SET" = 1 ]; then PASSES_A=$PASSES; else PASSES_A=4; fi
fi

die() { echo "bench-inspect.sh: $*" >&2; exit 1; }
log() { echo "bench-inspect.sh: $*" >&2; }

SLUICE=$BUILD/userspace/sluice
CONNRATE=$BUILD/tests/sluice_connrate
SCANRATE=$BUILD/tests/sluice_scan_rate
LIB=$REPO/scripts/lib
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, BPF)"
[ "$RUN_A" = 0 ] || [ $((PASSES_A % 4)) = 0 ] ||
    log "note: (a) rotates 4 paths; with $PASSES_A passes not every path comes first, second, third and fourth equally often"
[ -x "$PY" ] || die "$PY (Debian's python3) is needed to read iperf3's JSON"
[ -x "$SLUICE" ] || die "no $SLUICE; build it: cmake --build $BUILD --target sluice sluice_connrate sluice_scan_rate"
[ -x "$CONNRATE" ] || die "no $CONNRATE; build it: cmake --build $BUILD --target sluice_connrate"
[ "$RUN_B" = 0 ] || [ -x "$SCANRATE" ] || die "no $SCANRATE; build it: cmake --build $BUILD --target sluice_scan_rate"
command -v iperf3 >/dev/null || die "iperf3 is not installed (scripts/setup.sh installs it)"
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = 0 ] ||
    die "kernel.bpf_stats_enabled is 1; it roughly halves the packet rate. Set it to 0 first."
if ! mountpoint -q /sys/fs/bpf; then mount -t bpf bpf /sys/fs/bpf || die "cannot mount bpffs"; fi

TMP=$(mktemp -d /tmp/sluice-bench-inspect.XXXXXX)
P="sbi$$"          # namespace prefix; "<P>-lp" must fit IFNAMSIZ
[ ${#P} -le 12 ] || P="sbi${$: -6}"
PIDS=()            # background processes this script started
TOPOLOGY=0
SLUICE_PID=""
SLUICE_LOG=$TMP/sluice.log
RESULTS=$TMP/results.txt   # one line per measurement, read by inspect_bench_report.py
DETAILS=$TMP/details.txt   # per-run counters, printed under the tables
: >"$RESULTS"
: >"$DETAILS"

# shellcheck source=lib/procs.sh
source "$REPO/scripts/lib/procs.sh"   # stop_pid, forget_pid

cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM HUP
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
    if [ "$TOPOLOGY" = 1 ]; then
        "$SLUICE" --netns "$P-fw" down >/dev/null 2>&1
        topology_down "$P"
        # Leftovers of an interrupted run of ours (an instance that never reached `down`).
        rm -rf "/sys/fs/bpf/sluice/netns/$P-fw" "/run/sluice/netns/$P-fw"
    fi
    if [ "$rc" -ne 0 ] && [ -s "$SLUICE_LOG" ]; then
        echo "--- sluice daemon log (last 30 lines) ---" >&2
        tail -n 30 "$SLUICE_LOG" >&2
    fi
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
HOST_LINE="$(uname -r), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
LOAD_START=$(cut -d" " -f1-3 /proc/loadavg)
T_START=$(date +%s)

# ------------------------------------------------------------------ topology
# shellcheck source=lib/topology.sh
source "$LIB/topology.sh"
TOPOLOGY=1
topology_up "$P" || die "topology_up $P failed"
# Three more LAN host addresses: (c) spreads its client tuples over four
# source addresses (tests/bench/connrate/conn_rate.cpp).
LAN4_SOURCES=(198.18.1.10 198.18.1.11 198.18.1.12 198.18.1.13)
LAN6_SOURCES=(2001:2:0:1::10 2001:2:0:1::11 2001:2:0:1::12 2001:2:0:1::13)
for i in 1 2 3; do
    ip -n "$P-lan" addr add "${LAN4_SOURCES[$i]}/24" dev eth0
    ip -n "$P-lan" addr add "${LAN6_SOURCES[$i]}/64" dev eth0 nodad
done
WAN4=198.18.100.200
WAN6=2001:2:0:100::200

# Ports: iperf3 5201 (permit) / 5202 (inspect) / 5203 (handoff); short
# connections 5301-5316 (permit) / 5401-5416 (inspect). Kernel forwarding
# uses the permit ports.
port_iperf() {
    case $1 in
        inspect) echo 5202 ;;
        handoff) echo 5203 ;;
        *) echo 5201 ;;
    esac
}
ports_conn() { [ "$1" = inspect ] && echo 5401-5416 || echo 5301-5316; }

# The hand-off ruleset's limit, as written in the config and in bytes.
HANDOFF_INSPECT=64KiB
HANDOFF_BYTES=65536

# write_config FILE N [handoff]: the benchmark config with an N-pattern
# ruleset "bench" whose canary is "sluice-bench-canary-n<N>"
# (scripts/lib/inspect_patterns.py). With "handoff" (the config of (a) and
# (c)), also the policy of port 5203 and its ruleset "bench-handoff": the same
# N patterns, all client-to-server, with inspect-bytes. (b)'s configs leave it
# out, so that (b)'s reloads and sluice_scan_rate compile only "bench".
write_config() {
    local file=$1 n=$2 handoff=${3:-}
    {
        cat <<'EOF'
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
applications:
  iperf-fast: { protocol: tcp, destination-port: 5201 }
  iperf-inspect: { protocol: tcp, destination-port: 5202 }
  conn-fast: { protocol: tcp, destination-port: 5301-5316 }
  conn-inspect: { protocol: tcp, destination-port: 5401-5416 }
EOF
        [ -z "$handoff" ] || echo "  iperf-handoff: { protocol: tcp, destination-port: 5203 }"
        cat <<'EOF'
policies:
  - { name: fast, from: trust, to: untrust, source: [lan-net], application: [iperf-fast, conn-fast], action: permit }
  - { name: inspected, from: trust, to: untrust, source: [lan-net], application: [iperf-inspect, conn-inspect],
      action: { inspect: bench } }
EOF
        [ -z "$handoff" ] || cat <<'EOF'
  - { name: handed-off, from: trust, to: untrust, source: [lan-net], application: [iperf-handoff],
      action: { inspect: bench-handoff } }
EOF
        cat <<'EOF'
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
# (c) opens ~10^5 connections in a minute; with the default 2m a closed flow
# would hold its two session entries long enough to fill the table (2^18
# entries per family). See docs/inspect-bench.md.
timeouts: { tcp-time-wait: 10s }
inspect:
  rulesets:
    bench:
      patterns:
EOF
        "$PY" "$LIB/inspect_patterns.py" "$n" "$(printf 'sluice-bench-canary-n%04d' "$n")" | sed 's/^/        /'
        if [ -n "$handoff" ]; then
            printf '    bench-handoff:\n      inspect-bytes: %s\n      patterns:\n' "$HANDOFF_INSPECT"
            "$PY" "$LIB/inspect_patterns.py" "$n" "$(printf 'sluice-bench-canary-n%04d' "$n")" \
                --direction client-to-server | sed 's/^/        /'
        fi
    } >"$file"
}

# ------------------------------------------------------------------ sluice
sluice_start() {   # sluice_start CONFIG
    local t0 i
    t0=$(date +%s.%N)
    "$SLUICE" --netns "$P-fw" run -c "$1" >>"$SLUICE_LOG" 2>&1 &
    SLUICE_PID=$!
    PIDS+=("$SLUICE_PID")
    for i in $(seq 300); do
        grep -q "running (pid $SLUICE_PID)" "$SLUICE_LOG" 2>/dev/null && break
        kill -0 "$SLUICE_PID" 2>/dev/null || die "sluice run exited early"
        sleep 0.1
    done
    grep -q "running (pid $SLUICE_PID)" "$SLUICE_LOG" || die "sluice did not start within 30 s"
    STARTED_IN=$("$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
    sleep 1   # let the start's CPU burst (BPF load, hyperscan compile) pass
}
sluice_stop() {
    [ -n "$SLUICE_PID" ] || return 0
    stop_pid "$SLUICE_PID"
    forget_pid "$SLUICE_PID"
    SLUICE_PID=""
    "$SLUICE" --netns "$P-fw" down >>"$SLUICE_LOG" 2>&1 || true
}
want_sluice() {    # want_sluice on CONFIG | want_sluice off
    if [ "$1" = on ]; then
        [ -n "$SLUICE_PID" ] || sluice_start "$2"
    else
        sluice_stop
        ! ip -n "$P-fw" link show lan0 | grep -q ' xdp' && ! ip -n "$P-fw" link show wan0 | grep -q ' xdp' ||
            die "an XDP program is still attached in $P-fw after sluice down"
    fi
}
stats_json() { "$SLUICE" --netns "$P-fw" show stats --json; }
# `sluice show inspect --json`, flattened: "overloaded", and "rulesets"
# {name: the stage's counters, "patterns" {name: matches}, the fast path's
# punt counters as "fp_<name>"}.
counters_json() {
    "$SLUICE" --netns "$P-fw" show inspect --json | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
out = {"overloaded": int(bool(r["stage"].get("overloaded"))), "rulesets": {}}
for rs in r["rulesets"]:
    flat = dict(rs["stage"])
    flat.update({"fp_" + k: v for k, v in rs["fast_path"].items()})
    flat["patterns"] = {p["name"]: p["matches"] for p in rs["patterns"]}
    out["rulesets"][rs["name"]] = flat
print(json.dumps(out))'
}

# snapshot NAME: sluice's stats and the stage's counters, for before/after deltas.
snapshot() {
    stats_json >"$TMP/stats-$1.json" || die "sluice show stats failed"
    counters_json >"$TMP/counters-$1.json" || die "cannot read the inspection counters"
}

# check_path MODE WHAT [BYTES_RECEIVED] [CONNECTIONS] [STREAMS]: compares the
# snapshots "before" and "after" and fails unless the run took the path its
# mode names:
# inspect = the fast path punted, the stage accepted the connections (ruleset
# "bench") and scanned at least every byte the server received (the stage
# forwards only what it has scanned), with no match, reset, drop, offload,
# hand-off or stage error;
# handoff = the fast path punted, the stage accepted the connections (ruleset
# "bench-handoff"), scanned at least inspect-bytes of each of the STREAMS data
# connections, handed at least STREAMS connections back to XDP (handoffs),
# refused none (handoff_refused), and XDP renumbered segments after the
# hand-off (tcp-spliced-after-inspection); no match, reset, drop or stage error;
# fast = nothing punted, the stage saw nothing.
# inspect and handoff also fail when the other ruleset saw a connection.
# Prints a one-line summary of the counters either way.
check_path() {
    "$PY" - "$TMP/stats-before.json" "$TMP/stats-after.json" "$TMP/counters-before.json" \
        "$TMP/counters-after.json" "$1" "${3:-0}" "${4:-0}" "${5:-0}" "$HANDOFF_BYTES" <<'EOF'
import json, sys
sb, sa, cb, ca = (json.load(open(p)) for p in sys.argv[1:5])
mode, received, conns, streams, handoff_bytes = sys.argv[5], *(int(x) for x in sys.argv[6:10])
d = {k: v - sb["counters"].get(k, 0) for k, v in sa["counters"].items()}


def ruleset_delta(name):
    after, before = ca["rulesets"].get(name, {}), cb["rulesets"].get(name, {})
    return {k: v - before.get(k, 0) for k, v in after.items() if k != "patterns"}


rulesets = {name: ruleset_delta(name) for name in ca["rulesets"]}
own = {"inspect": "bench", "handoff": "bench-handoff"}.get(mode)
if own:
    c = rulesets.get(own, {})
else:  # fast path: what every ruleset saw, summed
    c = {}
    for r in rulesets.values():
        for k, v in r.items():
            c[k] = c.get(k, 0) + v
passed = sum(v for k, v in d.items() if k.startswith("pass-"))
punted = d.get("punt-to-inspection", 0)
spliced = d.get("tcp-spliced-after-inspection", 0)
dropped = {k: v for k, v in d.items() if k.startswith("drop-") and v}
line = (f"rx={d.get('rx', 0)} xdp_redirect={d.get('forward', 0)} passed={passed} punted={punted} "
        f"punt-socket-assigned={d.get('tc-punt-socket-assigned', 0)} "
        f"dropped={sum(dropped.values())}{' ' + ','.join(f'{k}={v}' for k, v in dropped.items()) if dropped else ''} "
        f"stage: connections={c.get('connections', 0)} scanned_c2s={c.get('bytes_client_to_server', 0)} "
        f"scanned_s2c={c.get('bytes_server_to_client', 0)}")
if mode == "handoff":
    share = f" ({c.get('bytes_client_to_server', 0) / received:.2%} of received)" if received else ""
    line = line.replace(" scanned_s2c=", f"{share} scanned_s2c=")
    line += (f" handoffs={c.get('handoffs', 0)} handoff_refused={c.get('handoff_refused', 0)} "
             f"tcp-spliced-after-inspection={spliced}")
print(line)
bad = []
if own:
    if c.get("connections", 0) < conns:
        bad.append(f"the stage accepted {c.get('connections', 0)} connections, expected at least {conns}")
    if punted == 0:
        bad.append("the fast path punted nothing")
    bad_counters = ["matches", "resets", "drops", "stage_errors", "fp_fail_open_packets",
                    "fp_fail_closed_packets", "fp_verdict_drop_packets"]
    if mode == "inspect":
        bad_counters += ["offloaded", "handoffs", "handoff_refused"]
        if c.get("bytes_client_to_server", 0) < received:
            bad.append(f"the stage scanned {c.get('bytes_client_to_server', 0)} bytes client-to-server, "
                       f"the server received {received}")
    else:
        bad_counters += ["handoff_refused"]
        if c.get("handoffs", 0) < streams:
            bad.append(f"the stage handed {c.get('handoffs', 0)} connections back to XDP, expected at least "
                       f"{streams} (one per iperf3 data stream)")
        if c.get("bytes_client_to_server", 0) < streams * handoff_bytes:
            bad.append(f"the stage scanned {c.get('bytes_client_to_server', 0)} bytes client-to-server, "
                       f"expected at least {streams} x {handoff_bytes} (inspect-bytes of each data stream)")
        if spliced < streams:
            bad.append(f"tcp-spliced-after-inspection = {spliced}: XDP did not carry the handed-off connections")
    for k in bad_counters:
        if c.get(k, 0):
            bad.append(f"{k} = {c[k]}")
    for name, r in rulesets.items():
        if name != own and (r.get("connections", 0) or r.get("bytes_client_to_server", 0)):
            bad.append(f"ruleset {name} saw {r.get('connections', 0)} connections on the {mode} path")
    if ca.get("overloaded") or cb.get("overloaded"):
        bad.append("the stage reported itself overloaded")
elif c.get("connections", 0) or c.get("bytes_client_to_server", 0) or punted:
    bad.append(f"the stage saw {c.get('connections', 0)} connections ({punted} packets punted) on the fast path")
if d.get("drop-session-table-full", 0):
    bad.append(f"drop-session-table-full = {d['drop-session-table-full']}: the session table is full")
if bad:
    print("; ".join(bad), file=sys.stderr)
    sys.exit(1)
EOF
}

# canary N: one short connection on the inspected ports carrying the canary
# of the N-pattern ruleset; its counter must go up by one, which proves the
# stage scans with that ruleset (after a start or a reload).
canary() {
    local n=$1 text before after
    text=$(printf 'sluice-bench-canary-n%04d' "$n")
    before=$(counters_json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["rulesets"].get("bench", {}).get("patterns", {}).get("canary", 0))')
    ip netns exec "$P-lan" "$PY" - "$WAN4" 5401 "$text" <<'EOF' || die "canary connection for $n patterns failed"
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(f"GET /?q={sys.argv[3]} HTTP/1.1\r\nHost: wan-host\r\n".ljust(120, "x").encode() + b"\r\n")
got = b""
while len(got) < 200:
    d = s.recv(4096)
    if not d:
        break
    got += d
s.close()
sys.exit(0 if len(got) >= 200 else 1)
EOF
    after=$(counters_json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["rulesets"].get("bench", {}).get("patterns", {}).get("canary", 0))')
    [ $((after - before)) = 1 ] ||
        die "the canary of the $n-pattern ruleset matched $((after - before)) times (expected 1): the stage is not running that ruleset"
}

# ------------------------------------------------------------------ iperf3
# iperf_run PART MODE FAM PASS [POINT]: one iperf3 run; appends to $RESULTS.
iperf_run() {
    local part=$1 mode=$2 fam=$3 pass=$4 point=${5:-} dst port json srv_json srv i seen
    port=$(port_iperf "$mode")
    if [ "$fam" = v4 ]; then dst=$WAN4; seen=198.18.1.10; else dst=$WAN6; seen=2001:2:0:1::10; fi
    json=$TMP/iperf-$part-$mode-$fam-$pass-$point.json
    srv_json=$TMP/iperf-server.json
    [ "$mode" = kernel ] || snapshot before
    ip netns exec "$P-wan" iperf3 -s -1 -p "$port" -J >"$srv_json" 2>"$TMP/iperf-server.err" &
    srv=$!
    PIDS+=("$srv")
    for i in $(seq 50); do
        ip netns exec "$P-wan" ss -Hltn "sport = :$port" | grep -q . && break
        sleep 0.1
    done
    ip netns exec "$P-lan" iperf3 -c "$dst" -B "$seen" -p "$port" -t "$TIME" -P "$STREAMS" -J >"$json" 2>"$TMP/iperf-client.err" || true
    for i in $(seq 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
    stop_pid "$srv"
    forget_pid "$srv"
    local parsed gbps received peer
    parsed=$("$PY" - "$json" "$srv_json" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"ERROR unreadable iperf3 JSON: {e}")
    sys.exit(0)
if r.get("error"):
    print("ERROR " + r["error"].replace("\n", " "))
    sys.exit(0)
try:
    h = json.load(open(sys.argv[2]))["start"]["connected"][0]["remote_host"]
except Exception as e:
    h = "unreadable-server-JSON"
h = h[7:] if h.startswith("::ffff:") else h
print(f'{r["end"]["sum_received"]["bits_per_second"] / 1e9:.3f} {r["end"]["sum_received"]["bytes"]} {h}')
EOF
)
    case $parsed in
        ERROR*) die "iperf3 $part $mode $fam pass $pass failed: ${parsed#ERROR } $(cat "$TMP/iperf-client.err")" ;;
    esac
    read -r gbps received peer <<<"$parsed"
    [ "$peer" = "$seen" ] || die "iperf3 $part $mode $fam pass $pass: the server saw $peer as the client, expected $seen"
    local extra=""
    if [ "$mode" != kernel ]; then
        snapshot after
        extra=$(check_path "$mode" iperf "$received" "$((STREAMS + 1))" "$STREAMS") ||
            die "iperf3 $part $mode $fam pass $pass${point:+ ($point patterns)} did not take the $mode path: $extra"
        echo "$part $mode${point:+ n=$point} $fam pass $pass: $extra" >>"$DETAILS"
    fi
    echo "$part $mode $fam $pass $gbps ${point:--}" >>"$RESULTS"
    local note=""
    if [ "$mode" = handoff ]; then
        note=$(sed -n 's/.*scanned_c2s=[0-9]* (\([^)]*\)).* handoffs=\([0-9]*\) handoff_refused=\([0-9]*\).*/  (handed off \2 of '"$STREAMS"' streams, \3 refused; scanned \1)/p' <<<"$extra")
    fi
    printf '   pass %s  %-8s %s %-6s %8s Gbit/s%s\n' "$pass" "$mode" "$fam" "${point:+n=$point}" "$gbps" "$note"
}

# ------------------------------------------------------------------ short connections
CONN_OFFSET=0
CONN_SERVERS=0
conn_servers_up() {
    [ "$CONN_SERVERS" = 1 ] && return 0
    local ports
    for ports in 5301-5316 5401-5416; do
        ip netns exec "$P-wan" "$CONNRATE" server --address "$WAN4" --address "$WAN6" --ports "$ports" \
            --threads 2 >"$TMP/connrate-server-$ports.log" 2>&1 &
        PIDS+=("$!")
    done
    for i in $(seq 50); do
        [ "$(grep -c listening "$TMP"/connrate-server-*.log 2>/dev/null | awk -F: '{s += $2} END {print s}')" = 2 ] && break
        sleep 0.1
    done
    [ "$(grep -c listening "$TMP"/connrate-server-*.log | awk -F: '{s += $2} END {print s}')" = 2 ] ||
        die "sluice_connrate servers did not start: $(cat "$TMP"/connrate-server-*.log)"
    CONN_SERVERS=1
}

# conn_run MODE FAM PASS: one short-connection run; appends to $RESULTS.
conn_run() {
    local mode=$1 fam=$2 pass=$3 dst sources=() json a
    if [ "$fam" = v4 ]; then
        dst=$WAN4
        for a in "${LAN4_SOURCES[@]}"; do sources+=(--source "$a"); done
    else
        dst=$WAN6
        for a in "${LAN6_SOURCES[@]}"; do sources+=(--source "$a"); done
    fi
    [ "$mode" = kernel ] || snapshot before
    json=$TMP/conn-$mode-$fam-$pass.json
    ip netns exec "$P-lan" "$CONNRATE" client --address "$dst" --ports "$(ports_conn "$mode")" \
        "${sources[@]}" --duration "$CONN_TIME" --warmup "$CONN_WARMUP" \
        --threads "$CONN_THREADS" --concurrency "$CONN_CONCURRENCY" --offset "$CONN_OFFSET" >"$json" ||
        die "sluice_connrate client failed ($mode $fam pass $pass)"
    local parsed rate completed fails p50 p99 next
    parsed=$("$PY" - "$json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["per_second"], r["completed"], sum(r["failures"].values()), r["latency_us"]["p50"], r["latency_us"]["p99"], r["next_offset"])
EOF
) || die "unreadable sluice_connrate output: $(cat "$json")"
    read -r rate completed fails p50 p99 next <<<"$parsed"
    CONN_OFFSET=$next
    local extra=""
    if [ "$mode" != kernel ]; then
        sleep 0.3   # the last connections' closes reach the stage
        snapshot after
        extra=$(check_path "$mode" conn 0 "$completed") ||
            die "short connections $mode $fam pass $pass did not take the $mode path: $extra"
        echo "c $mode $fam pass $pass: $extra" >>"$DETAILS"
    fi
    [ "$fails" = 0 ] || echo "c $mode $fam pass $pass: $fails failed connections: $(cat "$json")" >>"$DETAILS"
    echo "c $mode $fam $pass $rate $completed $fails $p50 $p99" >>"$RESULTS"
    printf '   pass %s  %-8s %s  %9s conn/s  (p50 %s µs, p99 %s µs, %s failed)\n' "$pass" "$mode" "$fam" "$rate" "$p50" "$p99" "$fails"
}

# ------------------------------------------------------------------ passes
SMALL_CONFIG=$TMP/fw-small.yaml
write_config "$SMALL_CONFIG" "$SMALL" handoff
"$SLUICE" check -c "$SMALL_CONFIG" >/dev/null || die "sluice check rejected the benchmark config ($SMALL_CONFIG)"
MODES_A=(kernel fast inspect handoff)
MODES_C=(kernel fast inspect)   # a short connection never reaches inspect-bytes
conn_servers_up   # (c)'s servers, also the canary's (port 5401)

# Pass p starts at mode (p-1) mod M of the part's M modes (a: kernel, fast,
# inspect, handoff; c: kernel, fast, inspect) and goes on in that order, so
# over k*M passes each path comes first, second, ... equally often; IPv6 goes
# first on even passes. sluice runs only when the path needs it.
run_pass() {   # run_pass PART PASS
    local part=$1 pass=$2 i m mode fams=(v4 v6) modes
    if [ "$part" = a ]; then modes=("${MODES_A[@]}"); else modes=("${MODES_C[@]}"); fi
    m=${#modes[@]}
    [ $((pass % 2)) = 0 ] && fams=(v6 v4)
    for ((i = 0; i < m; i++)); do
        mode=${modes[$(((pass - 1 + i) % m))]}
        if [ "$mode" = kernel ]; then
            want_sluice off
        elif [ -z "$SLUICE_PID" ]; then
            want_sluice on "$SMALL_CONFIG"
            echo "   sluice started in ${STARTED_IN}s: $(grep "inspection stage running" "$SLUICE_LOG" | tail -1 | sed 's/^.*inspection stage/inspection stage/')"
            canary "$SMALL"
        fi
        for fam in "${fams[@]}"; do
            if [ "$part" = a ]; then iperf_run a "$mode" "$fam" "$pass"; else conn_run "$mode" "$fam" "$pass"; fi
        done
    done
}

if [ "$RUN_A" = 1 ]; then
    echo "== (a) iperf3 -t $TIME -P $STREAMS through: kernel forwarding, sluice fast path, inspected path ($SMALL patterns), inspected and handed off (inspect-bytes $HANDOFF_INSPECT); $PASSES_A passes"
    for pass in $(seq "$PASSES_A"); do run_pass a "$pass"; done
fi

if [ "$RUN_C" = 1 ]; then
    echo
    echo "== (c) short connections, ${CONN_TIME}s per run, $CONN_THREADS client threads x $CONN_CONCURRENCY in flight, through: kernel forwarding, sluice fast path, inspected path; $PASSES passes"
    for pass in $(seq "$PASSES"); do run_pass c "$pass"; done
fi

if [ "$RUN_B" = 1 ]; then
    echo
    echo "== (b) iperf3 (IPv4) through the inspected path as the ruleset grows: $COUNTS patterns; $PASSES passes"
    B_CONFIG=$TMP/fw-b.yaml
    read -ra B_COUNTS <<<"$COUNTS"
    for n in "${B_COUNTS[@]}"; do
        write_config "$TMP/check-$n.yaml" "$n"
        "$SLUICE" check -c "$TMP/check-$n.yaml" >/dev/null || die "sluice check rejected the $n-pattern config"
    done
    CUR_N=""
    # Odd passes: kernel, fast, counts ascending; even passes: the reverse.
    for pass in $(seq "$PASSES"); do
        points=(kernel fast "${B_COUNTS[@]}")
        if [ $((pass % 2)) = 0 ]; then
            rev=()
            for ((i = ${#points[@]} - 1; i >= 0; i--)); do rev+=("${points[$i]}"); done
            points=("${rev[@]}")
        fi
        for point in "${points[@]}"; do
            case $point in
                kernel)
                    want_sluice off
                    iperf_run b kernel v4 "$pass" ;;
                fast)
                    if [ -z "$SLUICE_PID" ]; then
                        [ -n "$CUR_N" ] || CUR_N=${B_COUNTS[0]}
                        write_config "$B_CONFIG" "$CUR_N"
                        want_sluice on "$B_CONFIG"
                        echo "   sluice ($CUR_N patterns) started in ${STARTED_IN}s"
                        echo "b start $CUR_N $pass $STARTED_IN" >>"$RESULTS"
                        canary "$CUR_N"
                    fi
                    iperf_run b fast v4 "$pass" ;;
                *)
                    if [ -z "$SLUICE_PID" ]; then
                        CUR_N=$point
                        write_config "$B_CONFIG" "$point"
                        want_sluice on "$B_CONFIG"
                        echo "   sluice ($point patterns) started in ${STARTED_IN}s"
                        echo "b start $point $pass $STARTED_IN" >>"$RESULTS"
                    elif [ "$CUR_N" != "$point" ]; then
                        write_config "$B_CONFIG" "$point"
                        t0=$(date +%s.%N)
                        "$SLUICE" --netns "$P-fw" reload >>"$SLUICE_LOG" 2>&1 || die "sluice reload to $point patterns failed"
                        took=$("$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$(date +%s.%N)")
                        echo "b reload $point $pass $took" >>"$RESULTS"
                        CUR_N=$point
                        sleep 1
                    fi
                    canary "$point"
                    iperf_run b inspect v4 "$pass" "$point" ;;
            esac
        done
    done
fi
want_sluice off

if [ "$RUN_B" = 1 ]; then
    echo
    echo "== (b) the stage's scanner alone (sluice_scan_rate: compile, then random bytes through one stream per direction, one core)"
    # Three rounds, counts ascending, descending, ascending.
    for round in 1 2 3; do
        order=("${B_COUNTS[@]}")
        if [ "$round" = 2 ]; then
            order=()
            for ((i = ${#B_COUNTS[@]} - 1; i >= 0; i--)); do order+=("${B_COUNTS[$i]}"); done
        fi
        for n in "${order[@]}"; do
            line=$("$SCANRATE" "$TMP/check-$n.yaml" --seconds 0.5) || die "sluice_scan_rate failed on the $n-pattern ruleset"
            read -r compile_s state c2s s2c <<<"$("$PY" -c 'import json,sys; r = json.loads(sys.argv[1]); print(r["compile_s"], r["stream_state_bytes"], r["c2s_gbps"], r["s2c_gbps"])' "$line")"
            echo "s $n $round $compile_s $state $c2s $s2c" >>"$RESULTS"
            printf '   round %s  n=%-5s compile %6.2f s  stream state %4s B  scan %6.1f / %6.1f Gbit/s (c2s / s2c)\n' \
                "$round" "$n" "$compile_s" "$state" "$c2s" "$s2c"
        done
    done
fi

LOAD_END=$(cut -d" " -f1-3 /proc/loadavg)
ELAPSED=$(($(date +%s) - T_START))

# ------------------------------------------------------------------ report
mkdir -p "$(dirname "$OUT")"
cp "$RESULTS" "${OUT%.md}.results.txt"   # the raw measurements, for a second look
"$PY" "$LIB/inspect_bench_report.py" --results "$RESULTS" --details "$DETAILS" --md "$OUT" \
    ${SVG:+--svg "$SVG"} --date "$DATE" --host "$HOST_LINE" --load-start "$LOAD_START" --load-end "$LOAD_END" \
    --elapsed "$ELAPSED" --passes "$PASSES" --passes-a "$PASSES_A" --handoff-bytes "$HANDOFF_INSPECT" --time "$TIME" --streams "$STREAMS" --small "$SMALL" \
    --conn-time "$CONN_TIME" --conn-threads "$CONN_THREADS" --conn-concurrency "$CONN_CONCURRENCY" ||
    die "the report could not be written; the measurements are in ${OUT%.md}.results.txt"
echo
echo "=================================================================="
cat "$OUT"
echo "bench-inspect.sh: report written to $OUT${SVG:+, chart to $SVG}"
