#!/usr/bin/env bash
# sluice policy-at-scale benchmark, one run (docs/scale.md): the nf-hipac
# tables (bridging results on the nf-hipac v0.8 thread, 2003) on the local
# namespace topology (LAN host -> firewall namespace -> WAN host), with N rules
# that match none of the traffic, for three systems side by side:
#   sluice      the XDP datapath (`sluice --netns <fw> run -c FILE`)
#   nft-linear  kernel forwarding, the N rules one per line in a forward chain
#   nft-set     kernel forwarding, the N rules as one set lookup
# and two kinds of rule (scripts/lib/scale_rules.py):
#   src         rule i drops source 198.19.x.y/32 (the traffic comes from 198.18.1.x)
#   port        rule i drops destination port 20000+i of the traffic's protocol
#               (the traffic goes to 5201 and 5301-5316)
#
#   (a) throughput through a STATELESS filter: sluice's `filters:` stage on
#       lan0 (N drop rules, then a permit policy); nft with the N rules in a
#       forward chain and `notrack` in a raw prerouting chain (no conntrack
#       at all). iperf3 UDP (`-u -b 0`, fixed datagram size: Gbit/s and Mpps
#       forwarded, counted at the WAN host's interface, and the loss before
#       it) and TCP (`-P 4`, Gbit/s received), IPv4;
#   (b) new connections per second through the STATEFUL policy: sluice with N
#       `deny` policies before the permit; nft with `ct state
#       established,related accept` first, then the N rules, then the accept.
#       tests/bench/connrate (open, 80 B request, 200 B answer, close);
#   (c) sluice only (nftables has no equivalent): the cost of the first packet
#       of a flow from BPF_PROG_TEST_RUN (tests/bench/scale/scale_cost.cpp) at
#       each rule count and at 8 rules, with the (b) configs; also the
#       classification alone (a default-denied first packet minus the same
#       packet answered by the flow cache).
# Every pass measures every point (kind x count x system) once: one run per
# point per pass. Counts go up on odd passes and down on even ones; at each
# point the systems rotate which goes first. Cells are median (min–max) over
# passes; ratios are per pass, to the same system's 0-rule value of the same
# pass ((c): to the 8-rule value).
#
# usage: scripts/bench-scale.sh [--build DIR] [--out FILE] [--svg FILE] [--quick]
#                               [--counts "0 512 1024 2048 3072 10000"] [--kinds "src port"]
#                               [--systems "sluice nft-linear nft-set"] [--passes N] [--time S]
#                               [--streams N] [--udp-len BYTES] [--udp-streams N] [--port-width W]
#                               [--conn-time S] [--conn-concurrency N] [--cost-passes N]
#                               [--cost-calls N] [--skip-a] [--skip-b] [--skip-c]
#
#   --build DIR          build tree with userspace/sluice, tests/sluice_connrate and
#                        tests/sluice_scale_cost (default: $SLUICE_BUILD_DIR or <repo>/build)
#   --out FILE           the markdown report (default: <build>/scale-bench.md)
#   --svg FILE           the chart (default: <build>/scale-bench.svg; pass
#                        docs/scale-bench.svg to record a run in the docs)
#   --quick              a smoke test of the plumbing in a few minutes: counts
#                        "0 64 512", 1 pass, -t 1, 1 s of short connections,
#                        (c) 1 pass of 300 calls (explicit options win over
#                        these, wherever they stand)
#   --counts "..."       rule counts (default "0 512 1024 2048 3072 10000"); (c)
#                        adds 8, its yardstick
#   --kinds "..."        src and/or port (default both); mixed (three rule
#                        shapes, see scripts/lib/scale_rules.py) with --skip-a --skip-b
#   --systems "..."      any of sluice nft-linear nft-set (default all three)
#   --passes N           passes of (a) and (b) (default 3)
#   --time S             iperf3 -t (default 3)
#   --streams N          iperf3 TCP -P (default 4)
#   --udp-len BYTES      iperf3 UDP -l, the datagram payload (default 1400:
#                        1428-byte IP packets, nf-hipac's were "1450 byte")
#   --udp-streams N      iperf3 UDP -P (default 1)
#   --port-width W       ports per port rule (default 1; >1 makes ranges, and
#                        the nft set gets `flags interval`)
#   --conn-time S        seconds counted per short-connection run (default 2,
#                        after 0.5 s of warm-up)
#   --conn-concurrency N connections in flight per client thread (2 threads; default 32)
#   --cost-passes N      passes of (c) (default 5)
#   --cost-calls N       BPF_PROG_TEST_RUN calls per measure and pass in (c) (default 2000)
#   --skip-a, --skip-b, --skip-c   leave a part out
#
# Needs root and nftables (scripts/setup.sh installs it). Traffic stays inside
# namespaces this script creates, addressed from 198.18.0.0/15 only. Everything
# it starts is stopped by PID; the EXIT trap runs `sluice down` and deletes the
# namespaces (and with them every nftables rule it loaded).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SLUICE_BUILD_DIR:-$REPO/build}
OUT=""
SVG=""
COUNTS="0 512 1024 2048 3072 10000"
KINDS="src port"
SYSTEMS="sluice nft-linear nft-set"
PASSES=3
TIME=3
STREAMS=4
UDP_LEN=1400
UDP_STREAMS=1
PORT_WIDTH=1
CONN_TIME=2
CONN_WARMUP=0.5
CONN_CONCURRENCY=32
CONN_THREADS=2
COST_PASSES=5
COST_CALLS=2000
QUICK=0
RUN_A=1
RUN_B=1
RUN_C=1
PY=/usr/bin/python3
# iperf3 client and server CPUs (see iperf_run).
CLIENT_CPU=0
SERVER_CPU=$(( $(nproc) - 1 ))

usage() { sed -n '2,/^set -e/{/^set -e/!p}' "$0" | sed 's/^# \{0,1\}//'; }

ARGS=("$@")
# --quick first, so that explicit options after it win whatever their order.
for a in "$@"; do
    if [ "$a" = --quick ]; then
        QUICK=1
        COUNTS="0 64 512"
        PASSES=1
        TIME=1
        CONN_TIME=1
        COST_PASSES=1
        COST_CALLS=300
    fi
done
set -- "${ARGS[@]}"
while [ $# -gt 0 ]; do
    case $1 in
        --build) BUILD=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --svg) SVG=$2; shift 2 ;;
        --quick) shift ;;
        --counts) COUNTS=$2; shift 2 ;;
        --kinds) KINDS=$2; shift 2 ;;
        --systems) SYSTEMS=$2; shift 2 ;;
        --passes) PASSES=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --streams) STREAMS=$2; shift 2 ;;
        --udp-len) UDP_LEN=$2; shift 2 ;;
        --udp-streams) UDP_STREAMS=$2; shift 2 ;;
        --port-width) PORT_WIDTH=$2; shift 2 ;;
        --conn-time) CONN_TIME=$2; shift 2 ;;
        --conn-concurrency) CONN_CONCURRENCY=$2; shift 2 ;;
        --cost-passes) COST_PASSES=$2; shift 2 ;;
        --cost-calls) COST_CALLS=$2; shift 2 ;;
        --skip-a) RUN_A=0; shift ;;
        --skip-b) RUN_B=0; shift ;;
        --skip-c) RUN_C=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-scale.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$OUT" ] || OUT=$BUILD/scale-bench.md
[ -n "$SVG" ] || SVG=$BUILD/scale-bench.svg

die() { echo "bench-scale.sh: $*" >&2; exit 1; }
log() { echo "bench-scale.sh: $*" >&2; }

SLUICE=$BUILD/userspace/sluice
CONNRATE=$BUILD/tests/sluice_connrate
SCALECOST=$BUILD/tests/sluice_scale_cost
LIB=$REPO/scripts/lib
RULES=$LIB/scale_rules.py
PROBE=$LIB/scale_probe.py

read -ra COUNT_LIST <<<"$COUNTS"
read -ra KIND_LIST <<<"$KINDS"
read -ra SYSTEM_LIST <<<"$SYSTEMS"
[ ${#COUNT_LIST[@]} -gt 0 ] && [ ${#KIND_LIST[@]} -gt 0 ] && [ ${#SYSTEM_LIST[@]} -gt 0 ] ||
    die "--counts, --kinds and --systems must not be empty"
for n in "${COUNT_LIST[@]}"; do [[ $n =~ ^[0-9]+$ ]] || die "--counts: not a number: $n"; done
for k in "${KIND_LIST[@]}"; do
    [[ $k = src || $k = port ]] && continue
    # mixed: three rule shapes (scripts/lib/scale_rules.py), sluice's (c) only.
    [[ $k = mixed && $RUN_A = 0 && $RUN_B = 0 ]] && continue
    die "--kinds: src or port (or mixed, with --skip-a --skip-b), not $k"
done
for s in "${SYSTEM_LIST[@]}"; do
    [[ $s = sluice || $s = nft-linear || $s = nft-set ]] || die "--systems: sluice, nft-linear or nft-set, not $s"
done
# Ascending, without duplicates.
mapfile -t COUNT_LIST < <(printf '%s\n' "${COUNT_LIST[@]}" | sort -n -u)
has_system() { [[ " ${SYSTEM_LIST[*]} " = *" $1 "* ]]; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, BPF, nftables)"
[ -x "$PY" ] || die "$PY (Debian's python3) is needed to read iperf3's JSON"
if has_system sluice; then
    [ -x "$SLUICE" ] || die "no $SLUICE; build it: cmake --build $BUILD --target sluice sluice_connrate sluice_scale_cost"
fi
[ "$RUN_B" = 0 ] || [ -x "$CONNRATE" ] || die "no $CONNRATE; build it: cmake --build $BUILD --target sluice_connrate"
if [ "$RUN_C" = 1 ] && has_system sluice; then
    [ -x "$SCALECOST" ] || die "no $SCALECOST; build it: cmake --build $BUILD --target sluice_scale_cost"
fi
command -v iperf3 >/dev/null || die "iperf3 is not installed (scripts/setup.sh installs it)"
if has_system nft-linear || has_system nft-set; then
    command -v nft >/dev/null || die "nft is not installed (scripts/setup.sh installs nftables)"
fi
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = 0 ] ||
    die "kernel.bpf_stats_enabled is 1; it roughly halves the packet rate. Set it to 0 first."
if ! mountpoint -q /sys/fs/bpf; then mount -t bpf bpf /sys/fs/bpf || die "cannot mount bpffs"; fi

TMP=$(mktemp -d /tmp/sluice-bench-scale.XXXXXX)
P="sbs$$"          # namespace prefix; "<P>-lp" must fit IFNAMSIZ
[ ${#P} -le 12 ] || P="sbs${$: -6}"
PIDS=()            # background processes this script started
TOPOLOGY=0
SLUICE_PID=""
SLUICE_LOG=$TMP/sluice.log
RESULTS=$TMP/results.txt   # one line per measurement, read by scale_report.py
DETAILS=$TMP/details.txt   # per-run counters, printed under the tables
COST=$TMP/cost.jsonl       # (c): sluice_scale_cost's output
: >"$RESULTS"
: >"$DETAILS"
: >"$COST"

# shellcheck source=lib/procs.sh
source "$LIB/procs.sh"   # stop_pid, forget_pid

cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM HUP
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
    if [ "$TOPOLOGY" = 1 ]; then
        [ -x "$SLUICE" ] && "$SLUICE" --netns "$P-fw" down >/dev/null 2>&1
        topology_down "$P"   # the nftables rules live in $P-fw and go with it
        rm -rf "/sys/fs/bpf/sluice/netns/$P-fw" "/run/sluice/netns/$P-fw"
    fi
    if [ "$rc" -ne 0 ] && [ -s "$SLUICE_LOG" ]; then
        echo "--- sluice daemon log (last 30 lines) ---" >&2
        tail -n 30 "$SLUICE_LOG" >&2
    fi
    if [ "$rc" -ne 0 ] && [ -s "$RESULTS" ] && mkdir -p "$(dirname "$OUT")" 2>/dev/null; then
        cp "$RESULTS" "${OUT%.md}.partial-results.txt" && cp "$DETAILS" "${OUT%.md}.partial-details.txt" &&
            echo "bench-scale.sh: what was measured before the failure: ${OUT%.md}.partial-results.txt" >&2
    fi
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
HOST_LINE="$(uname -r), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
LOAD_START=$(cut -d" " -f1-3 /proc/loadavg)
GIT_REV=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$REPO" diff --quiet HEAD 2>/dev/null || GIT_REV="$GIT_REV (with uncommitted changes)"
NFT_VERSION=$(nft --version 2>/dev/null | head -1 || echo "nft not installed")
T_START=$(date +%s)

# ------------------------------------------------------------------ topology
# shellcheck source=lib/topology.sh
source "$LIB/topology.sh"
TOPOLOGY=1
topology_up "$P" || die "topology_up $P failed"
# (b) spreads its client tuples over four source addresses (conn_rate.cpp).
LAN4_SOURCES=(198.18.1.10 198.18.1.11 198.18.1.12 198.18.1.13)
for i in 1 2 3; do ip -n "$P-lan" addr add "${LAN4_SOURCES[$i]}/24" dev eth0; done
WAN4=198.18.100.200
LAN_CLIENT=198.18.1.10
# The probes send from the source rules' addresses (198.19.0.0/16, added to
# the LAN host one at a time): a probe that got through must be answered, or
# it would look blocked.
ip -n "$P-fw" route add 198.19.0.0/16 via 198.18.1.10 dev lan0
ip -n "$P-wan" route add 198.19.0.0/16 via 198.18.100.1
# Conntrack (used by (b)'s nftables runs only) keeps TIME_WAIT as long as the
# sluice configs do (tcp-time-wait: 10s), so that neither table fills.
ip netns exec "$P-fw" sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=10 2>/dev/null ||
    log "note: cannot set nf_conntrack_tcp_timeout_time_wait in $P-fw"
CT_MAX=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo "?")

# Ports: iperf3 5201 (UDP and TCP), short connections 5301-5316, probe
# control port 5999; the port rules start at 20000.
IPERF_PORT=5201
CONN_PORTS=5301-5316
PROBE_PORT=5999

# ------------------------------------------------------------------ configs
# cfg_file PART KIND N PROTO: the file of that point's config, made once.
#   PART a: sluice filter config (proto matters for port rules only)
#   PART b: sluice policy config (TCP; also (c)'s)
#   nft-a-linear / nft-a-set / nft-b-linear / nft-b-set: nftables scripts
cfg_file() {
    local part=$1 kind=$2 n=$3 proto=$4 file
    [ "$kind" = src ] && proto=any
    file=$TMP/cfg-$part-$kind-$n-$proto
    case $part in
        a) file+=.yaml; [ -s "$file" ] || "$PY" "$RULES" sluice-filter --kind "$kind" --count "$n" \
                --proto "${proto/any/udp}" --port-width "$PORT_WIDTH" >"$file" ;;
        b) file+=.yaml; [ -s "$file" ] || "$PY" "$RULES" sluice-policy --kind "$kind" --count "$n" \
                --proto tcp --port-width "$PORT_WIDTH" >"$file" ;;
        nft-a-*|nft-b-*)
            file+=.nft
            local mode=--stateless layout=${part##*-}
            [[ $part = nft-b-* ]] && mode=--stateful
            [ -s "$file" ] || "$PY" "$RULES" nft $mode --layout "$layout" --kind "$kind" --count "$n" \
                --proto "${proto/any/udp}" --port-width "$PORT_WIDTH" >"$file" ;;
        *) die "cfg_file: unknown part $part" ;;
    esac
    echo "$file"
}

# sluice check --json on every sluice config, once: validity (a config that
# does not fit is reported, and its points are left out), its wall time, and
# compile_ms / classifier_bytes when this build prints them.
declare -A SLUICE_OK=()
check_sluice_config() {   # check_sluice_config PART KIND N PROTO
    local part=$1 kind=$2 n=$3 proto=$4 file t0 t1 parsed
    file=$(cfg_file "$part" "$kind" "$n" "$proto")
    [ -n "${SLUICE_OK[$file]:-}" ] && return 0
    t0=$(date +%s.%N)
    "$SLUICE" check --json -c "$file" >"$TMP/check.json" 2>"$TMP/check.err" || true
    t1=$(date +%s.%N)
    parsed=$("$PY" - "$t0" "$t1" "$TMP/check.json" <<'EOF'
import json, sys
t0, t1 = float(sys.argv[1]), float(sys.argv[2])
try:
    r = json.load(open(sys.argv[3]))
except Exception:
    print("invalid", f"{t1 - t0:.2f}", "-", "-", "unreadable JSON from sluice check")
    sys.exit(0)
if not r.get("valid"):
    msg = "; ".join(e.get("message", "?") for e in r.get("errors", []))[:300].replace("\n", " ")
    print("invalid", f"{t1 - t0:.2f}", "-", "-", msg or "?")
    sys.exit(0)
def find(node, key):
    """The first value named `key` anywhere in the object (the fields may
    come nested, e.g. under a per-zone-pair or "classifier" object)."""
    if isinstance(node, dict):
        if key in node and isinstance(node[key], (int, float)) and not isinstance(node[key], bool):
            return node[key]
        children = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for c in children:
        v = find(c, key)
        if v is not None:
            return v
    return None
def num(k):
    v = find(r, k)
    return f"{v:.1f}" if isinstance(v, float) else (str(v) if isinstance(v, int) else "-")
print("ok", f"{t1 - t0:.2f}", num("compile_ms"), num("classifier_bytes"), "-")
EOF
)
    local status wall compile_ms classifier_bytes why
    read -r status wall compile_ms classifier_bytes why <<<"$parsed"
    echo "check $part $kind $n $proto $status $wall $compile_ms $classifier_bytes" >>"$RESULTS"
    if [ "$status" = ok ]; then
        SLUICE_OK[$file]=1
    else
        SLUICE_OK[$file]=0
        echo "sluice check $part $kind n=$n $proto: $why $(head -c 300 "$TMP/check.err")" >>"$DETAILS"
        log "sluice check rejected the $part/$kind/$n/$proto config: $why"
    fi
}
sluice_config_ok() { [ "${SLUICE_OK[$(cfg_file "$@")]:-0}" = 1 ]; }

# ------------------------------------------------------------------ systems
CUR_SYSTEM=""      # what is loaded in the firewall namespace now: "" | sluice:FILE | nft:FILE
sluice_start() {   # sluice_start CONFIG
    local t0 i
    t0=$(date +%s.%N)
    "$SLUICE" --netns "$P-fw" run -c "$1" >>"$SLUICE_LOG" 2>&1 &
    SLUICE_PID=$!
    PIDS+=("$SLUICE_PID")
    for i in $(seq 600); do
        grep -q "running (pid $SLUICE_PID)" "$SLUICE_LOG" 2>/dev/null && break
        kill -0 "$SLUICE_PID" 2>/dev/null || die "sluice run exited early ($1)"
        sleep 0.1
    done
    grep -q "running (pid $SLUICE_PID)" "$SLUICE_LOG" || die "sluice did not start within 60 s ($1)"
    STARTED_IN=$("$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$(date +%s.%N)")
    ip -n "$P-fw" link show lan0 | grep -q ' xdp' || die "sluice runs but no XDP program is attached to lan0"
    sleep 1   # let the start's CPU burst pass; start before the traffic (docs/inspect-bench.md)
}
sluice_stop() {
    [ -n "$SLUICE_PID" ] || return 0
    stop_pid "$SLUICE_PID"
    forget_pid "$SLUICE_PID"
    SLUICE_PID=""
    "$SLUICE" --netns "$P-fw" down >>"$SLUICE_LOG" 2>&1 || true
    ! ip -n "$P-fw" link show lan0 | grep -q ' xdp' && ! ip -n "$P-fw" link show wan0 | grep -q ' xdp' ||
        die "an XDP program is still attached in $P-fw after sluice down"
}
nft_clear() {
    ip netns exec "$P-fw" nft delete table ip sluice_scale 2>/dev/null || true
    [ -z "$(ip netns exec "$P-fw" nft list ruleset 2>/dev/null)" ] || die "nftables rules left in $P-fw"
}
# use_system SYSTEM FILE WHAT: makes FILE (a sluice config or an nft script)
# the one thing in force in the firewall namespace; records its load time.
use_system() {
    local system=$1 file=$2 what=$3 t0 took
    [ "$CUR_SYSTEM" = "$system:$file" ] && return 0
    if [ "$system" = sluice ]; then
        sluice_stop
        nft_clear
        sluice_start "$file"
        echo "load sluice $what $STARTED_IN" >>"$RESULTS"
        printf '   sluice started in %ss (%s)\n' "$STARTED_IN" "$what"
    else
        sluice_stop
        t0=$(date +%s.%N)
        ip netns exec "$P-fw" nft -f "$file" 2>"$TMP/nft.err" || die "nft -f failed for $what: $(head -c 500 "$TMP/nft.err")"
        took=$("$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$(date +%s.%N)")
        echo "load $system $what $took" >>"$RESULTS"
        sleep 0.5
    fi
    CUR_SYSTEM="$system:$file"
}
system_off() {
    sluice_stop
    nft_clear
    CUR_SYSTEM=""
}

# sluice's counters, for before/after deltas of each sluice run.
snapshot() { "$SLUICE" --netns "$P-fw" show stats --json >"$TMP/stats-$1.json" || die "sluice show stats failed"; }
# check_sluice_run PART: the run went through XDP (rx, forward), no policy
# deny or filter drop hit the measured traffic. Prints a one-line summary.
check_sluice_run() {
    "$PY" - "$TMP/stats-before.json" "$TMP/stats-after.json" "$1" <<'EOF'
import json, sys
b, a = (json.load(open(p))["counters"] for p in sys.argv[1:3])
d = {k: v - b.get(k, 0) for k, v in a.items() if v != b.get(k, 0)}
drops = {k: v for k, v in d.items() if k.startswith("drop-")}
filt = {k: v for k, v in d.items() if "filter" in k}
passes = {k: v for k, v in d.items() if k.startswith("pass-")}
line = (f"rx={d.get('rx', 0)} forward={d.get('forward', 0)} session-created={d.get('session-created', 0)} "
        f"passed={sum(passes.values())}"
        + (" (" + ",".join(f"{k}={v}" for k, v in sorted(passes.items())) + ")" if passes else "")
        + (" " + ",".join(f"{k}={v}" for k, v in sorted(drops.items())) if drops else "")
        + (" filter: " + ",".join(f"{k}={v}" for k, v in sorted(filt.items())) if filt else ""))
print(line)
bad = []
if d.get("rx", 0) == 0 or d.get("forward", 0) == 0:
    bad.append("sluice's XDP program saw or forwarded nothing")
for k, v in drops.items():
    if k.startswith("drop-policy") or "filter" in k or k == "drop-session-table-full":
        bad.append(f"{k} = {v}")
if bad:
    print("; ".join(bad), file=sys.stderr)
    sys.exit(1)
EOF
}
ct_count() { ip netns exec "$P-fw" cat /proc/sys/net/netfilter/nf_conntrack_count 2>/dev/null || echo "?"; }

# ------------------------------------------------------------------ probes
# The first time a point's rules are in force, a probe must be dropped by its
# LAST rule (all N rules are loaded and enforced) and a control must pass (the
# probe itself works). For sluice's filter (part a) a probe that passes does
# not stop the run: it is recorded, and the report says the filter stage did
# not enforce the rules (filters are parsed but not run by builds before the
# filter stage). Anything else that fails a probe stops the run.
declare -A PROBED=()
udp_probe() {   # udp_probe SRC PORT -> "received_from_src received_control"
    local src=$1 port=$2 lis out
    : >"$TMP/probe.out"
    ip netns exec "$P-wan" "$PY" "$PROBE" udp-listen --port "$port" --port2 "$PROBE_PORT" --seconds 5 \
        >"$TMP/probe.out" 2>&1 &
    lis=$!
    PIDS+=("$lis")
    for _ in $(seq 50); do grep -q listening "$TMP/probe.out" 2>/dev/null && break; sleep 0.05; done
    # The control first, the probe, then "stop" from the control's source:
    # it arrives after whatever of the probe got through.
    ip netns exec "$P-lan" "$PY" "$PROBE" udp-send --source "$LAN_CLIENT" --dest "$WAN4" --port "$PROBE_PORT" --count 3
    ip netns exec "$P-lan" "$PY" "$PROBE" udp-send --source "$src" --dest "$WAN4" --port "$port" --count 5
    ip netns exec "$P-lan" "$PY" "$PROBE" udp-send --source "$LAN_CLIENT" --dest "$WAN4" --port "$PROBE_PORT" --count 0 --stop
    wait "$lis" 2>/dev/null || true
    forget_pid "$lis"
    out=$(tail -1 "$TMP/probe.out")
    "$PY" -c '
import json, sys
r = json.loads(sys.argv[1])["received"]
print(r.get(sys.argv[2] + ":" + sys.argv[3], 0), r.get(sys.argv[4] + ":" + sys.argv[5], 0))' \
        "$out" "$src" "$port" "$LAN_CLIENT" "$PROBE_PORT" 2>/dev/null || echo "? ?"
}
tcp_probe() {   # tcp_probe SRC PORT -> "passed|blocked passed|blocked" (probe, control)
    local src=$1 port=$2 p c
    p=$(ip netns exec "$P-lan" "$PY" "$PROBE" tcp-probe --source "$src" --dest "$WAN4" --port "$port" --timeout 0.7)
    c=$(ip netns exec "$P-lan" "$PY" "$PROBE" tcp-probe --source "$LAN_CLIENT" --dest "$WAN4" --port "$PROBE_PORT" --timeout 0.7)
    echo "$p $c"
}
# probe PART SYSTEM KIND N PROTO
probe() {
    local part=$1 system=$2 kind=$3 n=$4 proto=$5 key last src port verdict got control
    key="$part/$system/$kind/$n/$proto"
    [ "$n" -gt 0 ] || return 0
    [ -z "${PROBED[$key]:-}" ] || return 0
    PROBED[$key]=1
    last=$("$PY" "$RULES" last-rule --kind "$kind" --count "$n" --port-width "$PORT_WIDTH")
    if [ "$kind" = src ]; then
        src=$last
        port=$PROBE_PORT
        ip -n "$P-lan" addr add "$src/32" dev eth0
    else
        src=$LAN_CLIENT
        port=$last
    fi
    if [ "$proto" = udp ]; then
        read -r got control <<<"$(udp_probe "$src" "$port")"
        [ "$control" != 0 ] && [ "$control" != "?" ] || die "probe $key: the control datagrams to :$PROBE_PORT did not arrive"
        [ "$got" = 0 ] && verdict=blocked || verdict=passed
    else
        read -r verdict control <<<"$(tcp_probe "$src" "$port")"
        [ "$control" = passed ] || die "probe $key: the control connection to :$PROBE_PORT got no answer ($control)"
    fi
    [ "$kind" = src ] && ip -n "$P-lan" addr del "$src/32" dev eth0
    echo "probe $part $system $kind $n $proto $verdict" >>"$RESULTS"
    echo "probe $key: last rule ($last) $verdict" >>"$DETAILS"
    if [ "$verdict" != blocked ]; then
        if [ "$part" = a ] && [ "$system" = sluice ]; then
            log "WARNING: sluice let through what the last of its $n filter rules drops ($kind, $proto): this build does not enforce filters; part (a) for sluice measures the permit policy alone"
        else
            die "probe $key: what the last rule ($last) matches got through $system: not all $n rules are in force"
        fi
    fi
}

# ------------------------------------------------------------------ iperf3
# iperf_run SYSTEM KIND N PROTO PASS: one iperf3 run; appends to $RESULTS.
iperf_run() {
    local system=$1 kind=$2 n=$3 proto=$4 pass=$5 json srv_json srv i args=()
    json=$TMP/iperf-$system-$kind-$n-$proto-$pass.json
    srv_json=$TMP/iperf-server.json
    [ "$system" = sluice ] && snapshot before
    # The server on the last CPU, the client on the first: on veth the
    # sender's CPU also does the forwarding (the firewall's work), and a
    # server the scheduler puts on that CPU now and then would make the
    # figures swing by tens of percent from run to run.
    ip netns exec "$P-wan" taskset -c "$SERVER_CPU" iperf3 -s -1 -p "$IPERF_PORT" -J >"$srv_json" 2>"$TMP/iperf-server.err" &
    srv=$!
    PIDS+=("$srv")
    for i in $(seq 50); do
        ip netns exec "$P-wan" ss -Hltn "sport = :$IPERF_PORT" | grep -q . && break
        sleep 0.1
    done
    if [ "$proto" = udp ]; then
        args=(-u -b 0 -l "$UDP_LEN" -P "$UDP_STREAMS")
    else
        args=(-P "$STREAMS")
    fi
    # UDP: what got through the firewall is counted at the WAN host's
    # interface. iperf3's own "received" counts what its server read from the
    # socket, and on this machine the server loses most of a -b 0 flood to
    # its socket buffer (UdpRcvbufErrors) whatever the firewall does.
    local rx0 rx1
    rx0=$(ip netns exec "$P-wan" cat /sys/class/net/eth0/statistics/rx_packets)
    # A slow point (10,000 linear rules) must still end: iperf3's own timeout
    # is -t plus its control exchanges; --connect-timeout bounds the start.
    ip netns exec "$P-lan" timeout $((TIME + 30)) taskset -c "$CLIENT_CPU" iperf3 -c "$WAN4" -B "$LAN_CLIENT" -p "$IPERF_PORT" -t "$TIME" \
        --connect-timeout 5000 "${args[@]}" -J >"$json" 2>"$TMP/iperf-client.err" || true
    sleep 0.1
    rx1=$(ip netns exec "$P-wan" cat /sys/class/net/eth0/statistics/rx_packets)
    for i in $(seq 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
    stop_pid "$srv"
    forget_pid "$srv"
    local parsed
    parsed=$("$PY" - "$json" "$srv_json" "$proto" "$((rx1 - rx0))" "$UDP_LEN" <<'EOF'
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
except Exception:
    h = "unreadable-server-JSON"
h = h[7:] if h.startswith("::ffff:") else h
end = r["end"]
rcv, snd = end["sum_received"], end["sum_sent"]
if sys.argv[3] == "udp":
    # Forwarded: datagrams that reached the WAN host's interface (its rx
    # counter also saw the few packets of iperf3's TCP control connection),
    # as UDP payload bit/s like iperf3's own figures.
    fwd, length = int(sys.argv[4]), int(sys.argv[5])
    secs = snd["seconds"] or 1
    sent = snd["packets"]
    fwd = min(fwd, sent)
    loss = 100.0 * (1 - fwd / sent) if sent else 100.0
    print(f'{fwd * length * 8 / secs / 1e9:.4f} {snd["bits_per_second"] / 1e9:.4f} {fwd / secs / 1e6:.4f} '
          f'{loss:.2f} {rcv["bits_per_second"] / 1e9:.4f} {h}')
else:
    print(f'{rcv["bits_per_second"] / 1e9:.4f} {snd["bits_per_second"] / 1e9:.4f} - - - {h}')
EOF
)
    case $parsed in
        ERROR*) die "iperf3 $proto $system $kind n=$n pass $pass failed: ${parsed#ERROR } $(head -c 300 "$TMP/iperf-client.err")" ;;
    esac
    local gbps sent mpps loss app peer
    read -r gbps sent mpps loss app peer <<<"$parsed"
    [ "$peer" = "$LAN_CLIENT" ] || die "iperf3 $proto $system $kind n=$n pass $pass: the server saw $peer as the client, expected $LAN_CLIENT"
    local extra=""
    if [ "$system" = sluice ]; then
        snapshot after
        extra=$(check_sluice_run a) || die "iperf3 $proto sluice $kind n=$n pass $pass did not take the measured path: $extra"
    else
        extra="conntrack entries in $P-fw after the run: $(ct_count)"
    fi
    echo "a $system $kind $n $proto pass $pass: $extra" >>"$DETAILS"
    echo "a $system $kind $n $proto $pass $gbps $sent $mpps $loss $app" >>"$RESULTS"
    if [ "$proto" = udp ]; then
        printf '   pass %s  %-10s %-4s n=%-6s udp %8s Gbit/s forwarded (%s Mpps; sent %s, lost before the WAN host %s%%, iperf3 received %s)\n' \
            "$pass" "$system" "$kind" "$n" "$gbps" "$mpps" "$sent" "$loss" "$app"
    else
        printf '   pass %s  %-10s %-4s n=%-6s tcp %8s Gbit/s\n' "$pass" "$system" "$kind" "$n" "$gbps"
    fi
}

# ------------------------------------------------------------------ short connections
CONN_OFFSET=0
CONN_SERVERS=0
conn_servers_up() {
    [ "$CONN_SERVERS" = 1 ] && return 0
    ip netns exec "$P-wan" "$CONNRATE" server --address "$WAN4" --ports "$CONN_PORTS" \
        --threads 2 >"$TMP/connrate-server.log" 2>&1 &
    PIDS+=("$!")
    for _ in $(seq 50); do grep -q listening "$TMP/connrate-server.log" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$TMP/connrate-server.log" || die "sluice_connrate server did not start: $(cat "$TMP/connrate-server.log")"
    CONN_SERVERS=1
}

# conn_run SYSTEM KIND N PASS: one short-connection run; appends to $RESULTS.
conn_run() {
    local system=$1 kind=$2 n=$3 pass=$4 sources=() json a
    for a in "${LAN4_SOURCES[@]}"; do sources+=(--source "$a"); done
    [ "$system" = sluice ] && snapshot before
    json=$TMP/conn-$system-$kind-$n-$pass.json
    ip netns exec "$P-lan" "$CONNRATE" client --address "$WAN4" --ports "$CONN_PORTS" \
        "${sources[@]}" --duration "$CONN_TIME" --warmup "$CONN_WARMUP" \
        --threads "$CONN_THREADS" --concurrency "$CONN_CONCURRENCY" --offset "$CONN_OFFSET" >"$json" ||
        die "sluice_connrate client failed ($system $kind n=$n pass $pass)"
    local parsed rate completed fails p50 p99 next
    parsed=$("$PY" - "$json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["per_second"], r["completed"], sum(r["failures"].values()), r["latency_us"]["p50"], r["latency_us"]["p99"], r["next_offset"])
EOF
) || die "unreadable sluice_connrate output: $(cat "$json")"
    read -r rate completed fails p50 p99 next <<<"$parsed"
    CONN_OFFSET=$next
    local extra
    if [ "$system" = sluice ]; then
        sleep 0.2
        snapshot after
        extra=$(check_sluice_run b) || die "short connections sluice $kind n=$n pass $pass did not take the measured path: $extra"
    else
        extra="conntrack entries in $P-fw after the run: $(ct_count)"
    fi
    [ "$fails" = 0 ] || extra+=" ; $fails failed connections: $(tr -d '\n' <"$json" | head -c 300)"
    echo "b $system $kind $n pass $pass: $extra" >>"$DETAILS"
    echo "b $system $kind $n $pass $rate $completed $fails $p50 $p99" >>"$RESULTS"
    printf '   pass %s  %-10s %-4s n=%-6s %9s conn/s  (p50 %s µs, p99 %s µs, %s failed)\n' \
        "$pass" "$system" "$kind" "$n" "$rate" "$p50" "$p99" "$fails"
}

# ------------------------------------------------------------------ passes
# points PASS: the (kind, count) points of a pass, one per line: kinds in
# the given order on odd passes and reversed on even ones, counts ascending
# on odd passes and descending on even ones.
points() {
    local pass=$1 kinds=("${KIND_LIST[@]}") counts=("${COUNT_LIST[@]}") k n i
    if [ $((pass % 2)) = 0 ]; then
        kinds=(); for ((i = ${#KIND_LIST[@]} - 1; i >= 0; i--)); do kinds+=("${KIND_LIST[$i]}"); done
        counts=(); for ((i = ${#COUNT_LIST[@]} - 1; i >= 0; i--)); do counts+=("${COUNT_LIST[$i]}"); done
    fi
    for k in "${kinds[@]}"; do for n in "${counts[@]}"; do echo "$k $n"; done; done
}
# rotation J: the systems, starting at the J-th (mod their number).
rotation() {
    local j=$1 m=${#SYSTEM_LIST[@]} i
    for ((i = 0; i < m; i++)); do echo "${SYSTEM_LIST[$(((j + i) % m))]}"; done
}

# One point of part a or b for one system: load its rules, probe, measure.
run_point() {   # run_point PART SYSTEM KIND N PASS
    local part=$1 system=$2 kind=$3 n=$4 pass=$5 protos proto file
    if [ "$part" = a ]; then
        protos=(udp tcp)
        [ $((pass % 2)) = 0 ] && protos=(tcp udp)
    else
        protos=(tcp)
    fi
    for proto in "${protos[@]}"; do
        case $system in
            sluice)
                sluice_config_ok "$part" "$kind" "$n" "$proto" || {
                    echo "skip $part sluice $kind $n $proto $pass" >>"$RESULTS"
                    continue
                }
                file=$(cfg_file "$part" "$kind" "$n" "$proto") ;;
            nft-linear) file=$(cfg_file "nft-$part-linear" "$kind" "$n" "$proto") ;;
            nft-set) file=$(cfg_file "nft-$part-set" "$kind" "$n" "$proto") ;;
        esac
        # Source rules have no protocol: one config serves UDP and TCP.
        use_system "$system" "$file" "$part/$kind/n=$n/$([ "$kind" = src ] && [ "$part" = a ] && echo any || echo "$proto")"
        probe "$part" "$system" "$kind" "$n" "$proto"
        if [ "$part" = a ]; then iperf_run "$system" "$kind" "$n" "$proto" "$pass"; else conn_run "$system" "$kind" "$n" "$pass"; fi
    done
}

run_part() {   # run_part PART
    local part=$1 pass j point kind n system pts sys
    for pass in $(seq "$PASSES"); do
        j=$((pass - 1))
        mapfile -t pts < <(points "$pass")
        for point in "${pts[@]}"; do
            read -r kind n <<<"$point"
            mapfile -t sys < <(rotation "$j")
            for system in "${sys[@]}"; do
                run_point "$part" "$system" "$kind" "$n" "$pass" </dev/null
            done
            j=$((j + 1))
        done
    done
    system_off
}

if has_system sluice; then
    for kind in "${KIND_LIST[@]}"; do
        for n in "${COUNT_LIST[@]}"; do
            if [ "$RUN_A" = 1 ]; then
                if [ "$kind" = src ]; then
                    check_sluice_config a src "$n" any
                else
                    check_sluice_config a port "$n" udp
                    check_sluice_config a port "$n" tcp
                fi
            fi
            [ "$RUN_B" = 0 ] && [ "$RUN_C" = 0 ] || check_sluice_config b "$kind" "$n" tcp
        done
        [ "$RUN_C" = 0 ] || check_sluice_config b "$kind" 8 tcp
    done
fi

if [ "$RUN_A" = 1 ]; then
    echo "== (a) stateless filter: iperf3 UDP (-u -b 0 -l $UDP_LEN -P $UDP_STREAMS) and TCP (-P $STREAMS), -t $TIME, IPv4; systems: ${SYSTEM_LIST[*]}; kinds: ${KIND_LIST[*]}; counts: ${COUNT_LIST[*]}; $PASSES passes"
    run_part a
fi

if [ "$RUN_B" = 1 ]; then
    echo
    echo "== (b) stateful policy: new connections per second (sluice_connrate, ${CONN_TIME}s per run, $CONN_THREADS threads x $CONN_CONCURRENCY in flight); $PASSES passes"
    conn_servers_up
    run_part b
fi

if [ "$RUN_C" = 1 ] && has_system sluice; then
    echo
    echo "== (c) first-packet cost (BPF_PROG_TEST_RUN, sluice only): $COST_PASSES passes x $COST_CALLS calls per measure"
    cost_args=()
    mapfile -t C_COUNTS < <(printf '%s\n' "${COUNT_LIST[@]}" 8 | sort -n -u)
    for kind in "${KIND_LIST[@]}"; do
        for n in "${C_COUNTS[@]}"; do
            if sluice_config_ok b "$kind" "$n" tcp; then
                cost_args+=(--config "$kind:$n=$(cfg_file b "$kind" "$n" tcp)")
            else
                echo "skip c sluice $kind $n tcp -" >>"$RESULTS"
            fi
        done
    done
    if [ ${#cost_args[@]} -gt 0 ]; then
        "$SCALECOST" "${cost_args[@]}" --passes "$COST_PASSES" --calls "$COST_CALLS" >"$COST" 2>"$TMP/cost.err" ||
            die "sluice_scale_cost failed: $(tail -5 "$TMP/cost.err")"
        "$PY" - "$COST" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "cost":
        print(f'   pass {r["pass"]}  {r["label"]:<11} {r["measure"]:<13} {r["iqm_ns"]:8.1f} ns (interquartile mean; mean {r["mean_ns"]:.1f})')
EOF
    fi
fi

LOAD_END=$(cut -d" " -f1-3 /proc/loadavg)
ELAPSED=$(($(date +%s) - T_START))

# ------------------------------------------------------------------ report
mkdir -p "$(dirname "$OUT")"
cp "$RESULTS" "${OUT%.md}.results.txt"   # the raw measurements, for a second look
cp "$COST" "${OUT%.md}.cost.jsonl"
"$PY" "$LIB/scale_report.py" --results "$RESULTS" --cost "$COST" --details "$DETAILS" --md "$OUT" \
    ${SVG:+--svg "$SVG"} --date "$DATE" --rev "$GIT_REV" --host "$HOST_LINE" --load-start "$LOAD_START" \
    --load-end "$LOAD_END" --elapsed "$ELAPSED" --passes "$PASSES" --time "$TIME" --streams "$STREAMS" \
    --udp-len "$UDP_LEN" --udp-streams "$UDP_STREAMS" --port-width "$PORT_WIDTH" --conn-time "$CONN_TIME" \
    --conn-threads "$CONN_THREADS" --conn-concurrency "$CONN_CONCURRENCY" --cost-passes "$COST_PASSES" \
    --cost-calls "$COST_CALLS" --nft-version "$NFT_VERSION" --ct-max "$CT_MAX" --quick "$QUICK" ||
    die "the report could not be written; the measurements are in ${OUT%.md}.results.txt"
echo
echo "=================================================================="
cat "$OUT"
echo "bench-scale.sh: report written to $OUT${SVG:+, chart to $SVG}"
