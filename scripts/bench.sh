#!/usr/bin/env bash
# sluice benchmark, one run (docs/benchmarks.md):
#   (a) per-packet cost of the XDP pipeline vs a minimal XDP redirect program
#       (sluice_bench: BPF_PROG_TEST_RUN durations, interleaved passes), and of
#       an established flow with source NAT vs the same flow without;
#   (b) iperf3 TCP throughput LAN host -> WAN host through the firewall
#       namespace, plain kernel forwarding vs sluice vs sluice with source NAT
#       to the WAN interface's address (generic XDP, what `auto` picks on
#       veth), IPv4 and IPv6, interleaved passes.
#
# usage: scripts/bench.sh [--build DIR] [--out FILE] [--passes N] [--time SECONDS]
#                         [--streams N] [--xdp-passes N] [--skip-xdp] [--skip-iperf]
#
#   --build DIR     build tree holding userspace/sluice and tests/sluice_bench
#                   (default: $SLUICE_BUILD_DIR or <repo>/build)
#   --out FILE      also write the results as markdown to FILE
#   --passes N      iperf3 passes (default 3); each pass measures kernel,
#                   sluice and sluice + source NAT for IPv4 and IPv6, rotating
#                   which goes first
#   --time S        iperf3 -t (default 5)       --streams N   iperf3 -P (default 4)
#   --xdp-passes N  sluice_bench --passes (default 5)
#
# Needs root. Traffic stays inside namespaces this script creates, addressed
# from 198.18.0.0/15 and 2001:2::/48. Everything it starts is stopped by PID.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLUICE_BUILD_DIR:-$REPO/build}
OUT=""
PASSES=3
TIME=5
STREAMS=4
XDP_PASSES=5
RUN_XDP=1
RUN_IPERF=1
PY=/usr/bin/python3

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case $1 in
        --build) BUILD=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --passes) PASSES=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --streams) STREAMS=$2; shift 2 ;;
        --xdp-passes) XDP_PASSES=$2; shift 2 ;;
        --skip-xdp) RUN_XDP=0; shift ;;
        --skip-iperf) RUN_IPERF=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done

die() { echo "bench.sh: $*" >&2; exit 1; }
log() { echo "bench.sh: $*" >&2; }

SLUICE=$BUILD/userspace/sluice
BENCH=$BUILD/tests/sluice_bench
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, BPF)"
[ -x "$PY" ] || die "$PY (Debian's python3) is needed to read iperf3's JSON"
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = 0 ] ||
    die "kernel.bpf_stats_enabled is 1; it roughly halves the packet rate. Set it to 0 first."
if [ "$RUN_XDP" = 1 ] && [ ! -x "$BENCH" ]; then
    die "no $BENCH; build it: cmake -S $REPO -B $BUILD && cmake --build $BUILD --target sluice_bench sluice"
fi
if [ "$RUN_IPERF" = 1 ]; then
    [ -x "$SLUICE" ] || die "no $SLUICE; build it: cmake --build $BUILD --target sluice"
    command -v iperf3 >/dev/null || die "iperf3 is not installed (scripts/setup.sh installs it)"
fi

TMP=$(mktemp -d /tmp/sluice-bench.XXXXXX)
P="slb$$"          # namespace prefix; "<P>-lp" must fit IFNAMSIZ
[ ${#P} -le 12 ] || P="slb${$: -6}"
PIDS=()            # background processes this script started
TOPOLOGY=0

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
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
HOST_LINE="$(uname -r), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load average at start $(cut -d" " -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- (a) per packet
XDP_MD=""
if [ "$RUN_XDP" = 1 ]; then
    echo "== (a) per-packet cost: sluice_bench (BPF_PROG_TEST_RUN), $XDP_PASSES interleaved passes"
    "$BENCH" --passes="$XDP_PASSES" --summary_out="$TMP/xdp.md" | tee "$TMP/xdp.log" ||
        die "sluice_bench failed (see above)"
    XDP_MD=$(cat "$TMP/xdp.md")
fi

# ---------------------------------------------------------------- (b) iperf3
IPERF_MD=""
if [ "$RUN_IPERF" = 1 ]; then
    echo
    echo "== (b) iperf3 LAN -> WAN through the firewall namespace: kernel forwarding vs sluice vs sluice + source NAT"
    echo "   $PASSES passes x (IPv4, IPv6) x (kernel, sluice, sluice-nat), iperf3 -t $TIME -P $STREAMS"
    # shellcheck source=lib/topology.sh
    source "$REPO/scripts/lib/topology.sh"
    TOPOLOGY=1
    topology_up "$P" || die "topology_up $P failed"

    # One base config; the NAT variant is the same file plus a nat: section.
    CONFIG=$TMP/fw.yaml
    NAT_CONFIG=$TMP/fw-nat.yaml
    cat >"$CONFIG" <<'EOF'
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
applications:
  iperf3: { protocol: tcp, destination-port: 5201 }
policies:
  - { name: lan-iperf, from: trust, to: untrust, source: [lan-net], application: [iperf3], action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
EOF
    cp "$CONFIG" "$NAT_CONFIG"
    cat >>"$NAT_CONFIG" <<'EOF'
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, source: [lan-net], translate: interface }
EOF
    "$SLUICE" check -c "$CONFIG" >/dev/null || die "sluice check rejected the benchmark config"
    "$SLUICE" check -c "$NAT_CONFIG" >/dev/null || die "sluice check rejected the benchmark NAT config"

    SLUICE_PID=""
    SLUICE_LOG=$TMP/sluice.log
    sluice_start() {   # sluice_start CONFIG
        "$SLUICE" --netns "$P-fw" run -c "$1" >>"$SLUICE_LOG" 2>&1 &
        SLUICE_PID=$!
        PIDS+=("$SLUICE_PID")
        local i
        for i in $(seq 150); do
            grep -q "running (pid $SLUICE_PID)" "$SLUICE_LOG" 2>/dev/null && break
            kill -0 "$SLUICE_PID" 2>/dev/null || { cat "$SLUICE_LOG" >&2; die "sluice run exited early"; }
            sleep 0.2
        done
        grep -q "running (pid $SLUICE_PID)" "$SLUICE_LOG" || { cat "$SLUICE_LOG" >&2; die "sluice did not start"; }
        ATTACH=$(grep "running (pid $SLUICE_PID)" "$SLUICE_LOG" | sed 's/.*attached: //')
    }
    sluice_stop() {
        stop_pid "$SLUICE_PID"
        forget_pid "$SLUICE_PID"
        SLUICE_PID=""
        "$SLUICE" --netns "$P-fw" down >>"$SLUICE_LOG" 2>&1 || true
    }
    no_xdp_attached() {
        ! ip -n "$P-fw" link show lan0 | grep -q ' xdp' && ! ip -n "$P-fw" link show wan0 | grep -q ' xdp'
    }
    stats_json() { "$SLUICE" --netns "$P-fw" show stats --json; }

    # measure MODE FAMILY PASS: one iperf3 run; appends a line to results.txt.
    # The server's JSON says whom it saw: the LAN host, or with source NAT the
    # firewall's WAN address.
    measure() {
        local mode=$1 fam=$2 pass=$3 dst json srv_json srv i seen
        if [ "$fam" = v4 ]; then
            dst=198.18.100.200
            [ "$mode" = sluice-nat ] && seen=198.18.100.1 || seen=198.18.1.10
        else
            dst=2001:2:0:100::200
            [ "$mode" = sluice-nat ] && seen=2001:2:0:100::1 || seen=2001:2:0:1::10
        fi
        json=$TMP/iperf-$mode-$fam-$pass.json
        srv_json=$TMP/iperf-server-$mode-$fam-$pass.json
        if [ "$mode" = kernel ]; then
            no_xdp_attached || die "an XDP program is attached in $P-fw during a kernel-forwarding run"
        else
            stats_json >"$TMP/stats-before.json" || die "sluice show stats failed"
        fi
        ip netns exec "$P-wan" iperf3 -s -1 -J >"$srv_json" 2>"$TMP/iperf-server.err" &
        srv=$!
        PIDS+=("$srv")
        for i in $(seq 50); do
            ip netns exec "$P-wan" ss -Hltn 'sport = :5201' | grep -q . && break
            sleep 0.1
        done
        ip netns exec "$P-lan" iperf3 -c "$dst" -t "$TIME" -P "$STREAMS" -J >"$json" 2>"$TMP/iperf-client.err" || true
        for i in $(seq 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
        stop_pid "$srv"
        forget_pid "$srv"
        local extra=""
        if [ "$mode" != kernel ]; then
            stats_json >"$TMP/stats-after.json" || die "sluice show stats failed"
            # Prints the path summary; exits 1 when the run did not translate
            # as its mode says (NAT: packets translated in XDP, and every
            # aggregate left to tc_egress_prog translated there; no NAT: none).
            extra=$("$PY" - "$TMP/stats-before.json" "$TMP/stats-after.json" "$mode" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["counters"]
a = json.load(open(sys.argv[2]))["counters"]
mode = sys.argv[3]
d = {k: a.get(k, 0) - b.get(k, 0) for k in a}
rx = d.get("rx", 0)
fwd = d.get("forward", 0)
passed = sum(v for k, v in d.items() if k.startswith("pass-"))
dropped = sum(v for k, v in d.items() if k.startswith("drop-"))
top = ",".join(f"{k}={v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]) if v and (k.startswith("pass-") or k.startswith("drop-")))[:200]
xlat = d.get("nat-translated", 0)
defer = d.get("nat-source-left-to-tc-egress", 0)
tc = d.get("tc-egress-nat-translated", 0)
nat = f" nat-translated={xlat} nat-source-left-to-tc-egress={defer} tc-egress-nat-translated={tc}" if mode == "sluice-nat" or xlat or tc else ""
print(f"rx={rx} xdp_redirect={fwd} passed={passed} dropped={dropped} {top}{nat}")
if mode == "sluice-nat" and (xlat == 0 or tc < defer):
    sys.exit(1)
if mode == "sluice" and (xlat or defer or tc):
    sys.exit(1)
EOF
) || die "$mode $fam pass $pass: sluice's counters say the run did not take the path its mode claims: $extra"
        fi
        local peer
        peer=$("$PY" - "$srv_json" <<'EOF'
import json, sys
try:
    h = json.load(open(sys.argv[1]))["start"]["connected"][0]["remote_host"]
except Exception as e:
    print(f"(unreadable iperf3 server JSON: {e})")
    sys.exit(0)
print(h[7:] if h.startswith("::ffff:") else h)
EOF
)
        [ "$peer" = "$seen" ] ||
            die "iperf3 $mode $fam pass $pass: the server saw ${peer:-nothing} as the client, expected $seen"
        local gbps
        gbps=$("$PY" - "$json" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"ERROR unreadable iperf3 JSON: {e}")
    sys.exit(0)
if r.get("error"):
    print("ERROR " + r["error"].replace("\n", " "))
    sys.exit(0)
print(f'{r["end"]["sum_received"]["bits_per_second"] / 1e9:.3f}')
EOF
)
        case $gbps in
            ERROR*) die "iperf3 $mode $fam pass $pass failed: ${gbps#ERROR } $(cat "$TMP/iperf-client.err")" ;;
        esac
        printf '%s %s %s %s\n' "$mode" "$fam" "$pass" "$gbps" >>"$TMP/results.txt"
        printf '   pass %s  %-10s %s  %8s Gbit/s  server saw %s  %s\n' "$pass" "$mode" "$fam" "$gbps" "$peer" "$extra"
        [ -n "$extra" ] && printf '%s %s %s %s\n' "$mode" "$fam" "$pass" "$extra" >>"$TMP/paths.txt"
        return 0
    }

    block() {   # block MODE PASS: IPv4 then IPv6 (IPv6 first on even passes)
        local mode=$1 pass=$2 fams=(v4 v6)
        [ $((pass % 2)) = 0 ] && fams=(v6 v4)
        case $mode in
            sluice) sluice_start "$CONFIG" ;;
            sluice-nat) sluice_start "$NAT_CONFIG" ;;
        esac
        if [ "$mode" != kernel ] && [ "$pass" = 1 ]; then echo "   $mode attached: $ATTACH"; fi
        for fam in "${fams[@]}"; do measure "$mode" "$fam" "$pass"; done
        if [ "$mode" != kernel ]; then sluice_stop; fi
    }

    # Pass p starts at mode (p-1) mod 3 of (kernel, sluice, sluice-nat), so
    # over 3k passes each mode comes first, second and third equally often.
    MODES=(kernel sluice sluice-nat)
    : >"$TMP/results.txt"
    for pass in $(seq "$PASSES"); do
        for i in 0 1 2; do block "${MODES[$(((pass - 1 + i) % 3))]}" "$pass"; done
    done

    IPERF_MD=$("$PY" - "$TMP/results.txt" "$PASSES" "$TIME" "$STREAMS" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
passes, t, streams = sys.argv[2], sys.argv[3], sys.argv[4]
res = {}
for mode, fam, p, g in rows:
    res.setdefault((mode, fam), {})[int(p)] = float(g)
def spread(v, d):
    v = sorted(v)
    return f"{statistics.median(v):.{d}f} ({v[0]:.{d}f}–{v[-1]:.{d}f})" if v else "-"
def ratios(a, b):
    return [a[p] / b[p] for p in sorted(b) if p in a and b[p] > 0]
print(f"iperf3 TCP throughput LAN host -> WAN host, Gbit/s (receiver), median (min–max) over {passes} interleaved passes, -t {t} -P {streams}")
print()
print("| family | kernel forwarding | sluice (generic XDP) | sluice + source NAT | sluice / kernel | NAT / no NAT | NAT / kernel |")
print("|---|---|---|---|---|---|---|")
for fam, label in (("v4", "IPv4"), ("v6", "IPv6")):
    k = res.get(("kernel", fam), {})
    s = res.get(("sluice", fam), {})
    n = res.get(("sluice-nat", fam), {})
    print(f"| {label} | {spread(k.values(), 2)} | {spread(s.values(), 2)} | {spread(n.values(), 2)} | "
          f"{spread(ratios(s, k), 2)} | {spread(ratios(n, s), 2)} | {spread(ratios(n, k), 2)} |")
print()
print("Ratios: per pass, of the same pass (NAT / no NAT = sluice + source NAT / sluice); median (min–max) of those.")
print("sluice + source NAT: the same config plus a `nat.source` rule trust → untrust, `translate: interface`.")
print("Every NAT run's server saw the firewall's WAN address (198.18.100.1, 2001:2:0:100::1) as the client,")
print("every other run's the LAN host (iperf3 server JSON, start.connected[0].remote_host).")
EOF
)
fi

# ---------------------------------------------------------------- report
REPORT=$TMP/report.md
{
    echo "## sluice benchmark, $DATE"
    echo
    echo "Machine: $HOST_LINE"
    echo
    if [ -n "$XDP_MD" ]; then
        echo "### (a) XDP per-packet cost vs a minimal XDP redirect"
        echo
        echo "$XDP_MD"
        echo
    fi
    if [ -n "$IPERF_MD" ]; then
        echo "### (b) Throughput through the firewall namespace"
        echo
        echo "$IPERF_MD"
        echo
        if [ -s "$TMP/paths.txt" ]; then
            echo "Where sluice's packets went (its counters during each run; passed = handed to the kernel):"
            echo
            echo '```'
            cat "$TMP/paths.txt"
            echo '```'
        fi
    fi
} >"$REPORT"
echo
echo "=================================================================="
cat "$REPORT"
if [ -n "$OUT" ]; then
    cp "$REPORT" "$OUT"
    echo "bench.sh: results written to $OUT"
fi
