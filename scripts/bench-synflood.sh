#!/usr/bin/env bash
# SYN-flood benchmark, one run (docs/host-protection.md): on the namespace
# topology (WAN host -> firewall namespace -> LAN host), trafgen sends
# spoofed-source SYNs (198.19.x.y, random ports and sequence numbers) at the
# highest rate one generator core reaches towards a permitted service on the
# LAN host, while tests/bench/connrate opens short connections (connect, 80 B
# request, 200 B answer, close; a connection slower than 1 s fails) from the
# WAN host to the same service. Per system, without and with the flood:
#   none          kernel forwarding, no firewall
#   sluice        sluice, no screen (every permitted SYN creates a session)
#   sluice-proxy  sluice, `screen: { syn-proxy: always }` on the WAN zone
#   sluice-auto   sluice, `screen: { syn-proxy: { above: 1000 } }`
#   nft-ct        nftables conntrack (ct state new tcp dport ... accept)
#   nft-synproxy  nftables synproxy (notrack the SYNs, synproxy the rest)
# Reported: connections per second with the flood as a ratio to the same
# system without it (same pass, back to back), the SYN rate that reached the
# firewall, the firewall's sessions / conntrack entries after the flood, and
# the CPU busy share of the whole machine (2 cores: generator, firewall and
# hosts share it) with its softirq part. Every pass runs every system, in a
# rotating order; cells are median (min-max) over passes. A run whose
# system is not in the path (XDP not attached, nft counters still, no
# cookies sent) fails.
#
# Part (b), one source flooding with real connections: one WAN address
# (198.18.100.201) opens connections as fast as 64 in flight allow while
# legitimate clients on 16 other addresses (198.18.100.10-25, 8 in flight
# together) go on, through sluice without limits and with
# `source-limit: { new-sessions: 2000 }`; reported: the legitimate clients'
# rate with the flooder as a ratio to without it, and the rate the flooder
# got.
#
# usage: scripts/bench-synflood.sh [--build DIR] [--out FILE] [--passes N] [--time S]
#                                  [--systems "none sluice sluice-proxy sluice-auto nft-ct nft-synproxy"]
#                                  [--concurrency N] [--skip-b] [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/topology.sh

BUILD=${SLUICE_BUILD_DIR:-$PWD/build}
OUT=""
PASSES=3
TIME=5
CONCURRENCY=8
SKIP_B=0
SYSTEMS="none sluice sluice-proxy sluice-auto nft-ct nft-synproxy"
while [ $# -gt 0 ]; do
    case $1 in
    --build) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --passes) PASSES=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --systems) SYSTEMS=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --quick) PASSES=1; TIME=2; shift ;;
    --skip-b) SKIP_B=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-synflood: unknown option $1" >&2; exit 2 ;;
    esac
done
OUT=${OUT:-$BUILD/synflood-bench.md}
SLUICE=$BUILD/userspace/sluice
CONNRATE=$BUILD/tests/sluice_connrate
die() { echo "bench-synflood: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (namespaces, XDP)"
[ -x "$SLUICE" ] && [ -x "$CONNRATE" ] || die "build first: cmake --build $BUILD --target sluice sluice_connrate"
command -v trafgen >/dev/null || die "trafgen is missing (Debian package netsniff-ng; scripts/setup.sh installs it)"
command -v nft >/dev/null || die "nft is missing (scripts/setup.sh installs nftables)"
command -v conntrack >/dev/null || die "conntrack is missing (scripts/setup.sh installs it)"

P=sfb
TMP=$(mktemp -d /tmp/sluice-synflood.XXXXXX)
PIDS=()
TG=""
stop_trafgen() { # its process group (setsid made TG its leader): INT, then KILL
    [ -n "$TG" ] || return 0
    kill -INT -- "-$TG" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$TG" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$TG" 2>/dev/null || true
    wait "$TG" 2>/dev/null || true
    TG=""
}
cleanup() {
    local pid
    stop_trafgen
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    "$SLUICE" --netns "$P-fw" down >/dev/null 2>&1 || true
    topology_down "$P"
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fw() { ip netns exec "$P-fw" "$@"; }
stat() { # COUNTER: one counter of sluice show stats --json
    "$SLUICE" --netns "$P-fw" show stats --json | /usr/bin/python3 -c \
        'import json,sys; print(json.load(sys.stdin)["counters"][sys.argv[1]])' "$1"
}
rx_packets() { fw ip -j -s link show wan0 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'; }
cpu_sample() { awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6, $8}' /proc/stat; } # total idle+iowait softirq

topology_up "$P" || die "cannot build the topology"
# Spoofed sources live in 198.19.0.0/16: the firewall routes their answers
# back to the WAN host, which drops them (it does not forward).
fw ip route add 198.19.0.0/16 via 198.18.100.200

# The connections' client and server run on CPU 1; trafgen pins its sending
# process to CPU 0. veth processes a packet on the CPU that sent it, so the
# flood's path through the firewall runs on CPU 0 and the connections' on
# CPU 1: what the flood does to the connections is the firewall's state (and
# any lock it shares), not two processes fighting for one core. The sluice
# daemon (its session GC walks the table every second while connections
# open) runs on CPU 0 too, with the rest of the firewall's flood work.
ip netns exec "$P-lan" taskset -c 1 "$CONNRATE" server --address 198.18.1.10 --ports 5301-5316 --threads 1 >"$TMP/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q listening "$TMP/server.log" && break; sleep 0.1; done
grep -q listening "$TMP/server.log" || die "connrate server did not start: $(cat "$TMP/server.log")"

FW_MAC=$(fw ip -j link show wan0 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
WAN_MAC=$(ip -n "$P-wan" -j link show eth0 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
mac_bytes() { echo "0x${1//:/, 0x}"; }
cat >"$TMP/syn.cfg" <<EOF
{
  $(mac_bytes "$FW_MAC"), $(mac_bytes "$WAN_MAC"), c16(0x0800),
  0x45, 0x00, c16(40), drnd(2), c16(0x4000), 64, 6, csumip(14, 33),
  198, 19, drnd(2),
  198, 18, 1, 10,
  drnd(2), c16(5301), drnd(4), c32(0), 0x50, 0x02, c16(64240), csumtcp(14, 34), c16(0),
}
EOF

# Part (b): 16 legitimate sources and one flooding source on the WAN host.
LEGIT_SOURCES=""
for i in $(seq 10 25); do
    ip -n "$P-wan" addr add "198.18.100.$i/24" dev eth0
    LEGIT_SOURCES="$LEGIT_SOURCES 198.18.100.$i"
done
ip -n "$P-wan" addr add 198.18.100.201/24 dev eth0

sluice_config() { # SCREEN
    cat >"$TMP/fw.yaml" <<EOF
interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }
zones:
  trust: {}
  untrust: { screen: $1 }
applications: { bench: { protocol: tcp, destination-port: [5301-5316] } }
policies:
  - { name: in, from: untrust, to: trust, application: [bench], action: permit }
  - { name: out, from: trust, to: untrust, action: permit }
default-action: deny
EOF
}

start_system() { # SYSTEM
    case $1 in
    none) ;;
    sluice | sluice-proxy | sluice-auto)
        case $1 in
        sluice) sluice_config "{}" ;;
        sluice-proxy) sluice_config "{ syn-proxy: always }" ;;
        sluice-auto) sluice_config "{ syn-proxy: { above: 1000 } }" ;;
        esac
        taskset -c 0 "$SLUICE" --netns "$P-fw" run -c "$TMP/fw.yaml" >"$TMP/sluice.log" 2>&1 &
        SLUICE_PID=$!
        PIDS+=("$SLUICE_PID")
        for _ in $(seq 100); do grep -q "running" "$TMP/sluice.log" && break; sleep 0.1; done
        grep -q running "$TMP/sluice.log" || die "sluice did not start: $(cat "$TMP/sluice.log")"
        fw ip -j link show wan0 | grep -q '"xdp"' || die "$1: no XDP program on wan0"
        ;;
    nft-ct)
        fw nft -f - <<'EOF'
table inet bench {
  chain forward { type filter hook forward priority 0; policy drop;
    ct state established,related counter accept
    iifname "wan0" ct state new tcp dport 5301-5316 counter accept
    iifname "lan0" accept
  }
}
EOF
        ;;
    nft-synproxy)
        fw nft -f - <<'EOF'
table inet bench {
  chain pre { type filter hook prerouting priority raw; policy accept;
    iifname "wan0" tcp dport 5301-5316 tcp flags syn notrack
  }
  chain forward { type filter hook forward priority 0; policy drop;
    iifname "wan0" tcp dport 5301-5316 ct state invalid,untracked counter synproxy mss 1460 wscale 7 timestamp sack-perm
    ct state invalid drop
    ct state established,related counter accept
    iifname "lan0" accept
  }
}
EOF
        # The client's ACK must reach synproxy as invalid, not be picked up
        # by conntrack as a connection in progress (the table exists now).
        fw sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0
        ;;
    esac
}

stop_system() { # SYSTEM
    case $1 in
    sluice*)
        kill "$SLUICE_PID" 2>/dev/null || true
        wait "$SLUICE_PID" 2>/dev/null || true
        "$SLUICE" --netns "$P-fw" down >/dev/null 2>&1 || true ;;
    nft*) fw nft delete table inet bench ;;
    esac
    # The next system starts from an empty conntrack table.
    fw conntrack -F >/dev/null 2>&1 || die "conntrack -F failed in $P-fw"
}

table_size() { # SYSTEM: "flows from spoofed sources (198.19/16)/all flows" in the sessions or conntrack table now
    case $1 in
    sluice*) "$SLUICE" --netns "$P-fw" show sessions --json | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)["sessions"]
print("%d/%d" % (sum(1 for f in s if f["source"].startswith("198.19.")), len(s)))' ;;
    nft*) echo "$(fw grep -c "src=198\.19\." /proc/net/nf_conntrack)/$(fw cat /proc/sys/net/netfilter/nf_conntrack_count)" ;;
    *) echo "-" ;;
    esac
}

echo 0 >"$TMP/offset"
connrate() { # [SOURCE CPU CONCURRENCY] -> conn/s; the client's JSON goes to $TMP/last-connrate.json.
    # Each run continues the tuples where the last one stopped (tests/bench/connrate).
    local sources=${1:-198.18.100.200} cpu=${2:-1} concurrency=${3:-$CONCURRENCY} args=() a
    for a in $sources; do args+=(--source "$a"); done
    ip netns exec "$P-wan" taskset -c "$cpu" "$CONNRATE" client --address 198.18.1.10 --ports 5301-5316 \
        "${args[@]}" --duration "$TIME" --warmup 0.5 --threads 1 --concurrency "$concurrency" \
        --timeout-ms 1000 --offset "$(cat "$TMP/offset")" >"$TMP/last-connrate.json"
    /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["next_offset"])' "$TMP/last-connrate.json" \
        >"$TMP/offset"
    /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_second"])' "$TMP/last-connrate.json"
}

in_path_check() { # SYSTEM COOKIES_BEFORE: fail unless the system was in the path
    case $1 in
    sluice-proxy)
        [ "$(stat syn-proxy-cookie-sent)" -gt "$2" ] || die "sluice-proxy: no SYN cookie was sent during the flood" ;;
    sluice | sluice-auto)
        [ "$(stat session-hit)" -gt 0 ] || die "$1: no packet hit a session" ;;
    nft*)
        fw nft -j list table inet bench | /usr/bin/python3 -c '
import json, sys
n = sum(e["counter"]["packets"] for r in json.load(sys.stdin)["nftables"] if "rule" in r
        for e in r["rule"]["expr"] if "counter" in e)
sys.exit(0 if n > 0 else 1)' || die "$1: the nft counters did not move" ;;
    esac
}

RESULTS=$TMP/results.tsv
: >"$RESULTS"
read -ra systems <<<"$SYSTEMS"
for pass in $(seq 1 "$PASSES"); do
    n=${#systems[@]}
    for i in $(seq 0 $((n - 1))); do
        sys=${systems[$(((i + pass - 1) % n))]}
        start_system "$sys"
        r0=$(rx_packets); b0=$(date +%s.%N)
        base=$(connrate)
        r1=$(rx_packets); b1=$(date +%s.%N)
        cookies=0
        [[ $sys == sluice* ]] && cookies=$(stat syn-proxy-cookie-sent)
        # In a session of its own: trafgen's sending processes are children
        # that only stop when their process group is signalled.
        setsid ip netns exec "$P-wan" trafgen --dev eth0 --conf "$TMP/syn.cfg" --cpus 1 --no-sock-mem --notouch-irq \
            --no-cpu-stats >"$TMP/trafgen.log" 2>&1 &
        TG=$!
        sleep 1
        read -r t0 idle0 soft0 < <(cpu_sample)
        s0=$(date +%s.%N)
        rx1=$(rx_packets)
        flood=$(connrate)
        rx2=$(rx_packets)
        s1=$(date +%s.%N)
        read -r t1 idle1 soft1 < <(cpu_sample)
        kill -0 "$TG" 2>/dev/null || die "$sys: trafgen stopped early: $(cat "$TMP/trafgen.log")"
        stop_trafgen
        # The flood is there when the firewall received well over what the
        # connections alone bring.
        /usr/bin/python3 -c "import sys; sys.exit(0 if ($rx2 - $rx1) / ($s1 - $s0) > ($r1 - $r0) / ($b1 - $b0) + 20000 else 1)" ||
            die "$sys: the flood did not reach the firewall (rx $(((rx2 - rx1))) packets in the flood window)"
        in_path_check "$sys" "$cookies"
        size=$(table_size "$sys")
        failures=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(d.get("failures", {}).values()) if isinstance(d.get("failures"), dict) else d.get("failures", 0))' "$TMP/last-connrate.json")
        # SYNs: what arrived beyond the connections' own packets.
        pps=$(/usr/bin/python3 -c "print(round(($rx2 - $rx1) / ($s1 - $s0) - ($r1 - $r0) / ($b1 - $b0)))")
        busy=$(/usr/bin/python3 -c "print(round(100 * (1 - ($idle1 - $idle0) / ($t1 - $t0)), 1))")
        soft=$(/usr/bin/python3 -c "print(round(100 * ($soft1 - $soft0) / ($t1 - $t0), 1))")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pass" "$sys" "$base" "$flood" "$pps" "$size" "$busy" "$soft" "$failures" >>"$RESULTS"
        echo "pass $pass $sys: $base conn/s without flood, $flood with ($pps SYN/s at the firewall), table $size, CPU $busy% (softirq $soft%), $failures failed connections"
        stop_system "$sys"
        sleep 1
    done
done

# Part (b): one real source flooding with connections.
RESULTS_B=$TMP/results-b.tsv
: >"$RESULTS_B"
if [ "$SKIP_B" = 0 ]; then
    for pass in $(seq 1 "$PASSES"); do
        for screen in "{}" "{ source-limit: { new-sessions: 2000 } }"; do
            sluice_config "$screen"
            label=$([ "$screen" = "{}" ] && echo "no limit" || echo "source-limit: { new-sessions: 2000 }")
            taskset -c 0 "$SLUICE" --netns "$P-fw" run -c "$TMP/fw.yaml" >"$TMP/sluice.log" 2>&1 &
            SLUICE_PID=$!
            PIDS+=("$SLUICE_PID")
            for _ in $(seq 100); do grep -q "running" "$TMP/sluice.log" && break; sleep 0.1; done
            grep -q running "$TMP/sluice.log" || die "sluice did not start: $(cat "$TMP/sluice.log")"
            base=$(connrate "$LEGIT_SOURCES")
            drops0=$(( $(stat drop-screen-source-rate) + $(stat drop-screen-source-sessions) ))
            # The flooder: its own tuples (offset far away), CPU 0, 64 in flight.
            ip netns exec "$P-wan" taskset -c 0 "$CONNRATE" client --address 198.18.1.10 --ports 5301-5316 \
                --source 198.18.100.201 --duration $((TIME + 2)) --warmup 0 --threads 1 --concurrency 64 \
                --timeout-ms 1000 --offset 500000000 >"$TMP/flooder.json" &
            FL=$!
            sleep 0.5
            legit=$(connrate "$LEGIT_SOURCES")
            wait "$FL" || true
            flooder=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_second"])' "$TMP/flooder.json")
            drops=$(( $(stat drop-screen-source-rate) + $(stat drop-screen-source-sessions) - drops0 ))
            if [ "$screen" != "{}" ] && [ "$drops" -le 0 ]; then die "part (b): the source limit dropped nothing"; fi
            printf '%s	%s	%s	%s	%s	%s
' "$pass" "$label" "$base" "$legit" "$flooder" "$drops" >>"$RESULTS_B"
            echo "pass $pass (b) $label: legitimate $base conn/s alone, $legit with the flooder; flooder $flooder conn/s; $drops limited"
            kill "$SLUICE_PID" 2>/dev/null || true
            wait "$SLUICE_PID" 2>/dev/null || true
            "$SLUICE" --netns "$P-fw" down >/dev/null 2>&1 || true
            sleep 1
        done
    done
fi

/usr/bin/python3 - "$RESULTS" "$OUT" "$PASSES" "$TIME" "$CONCURRENCY" "$RESULTS_B" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
out, passes, time_s, conc = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
order = []
for r in rows:
    if r[1] not in order:
        order.append(r[1])
def cell(vals, fmt="{:.0f}"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return (fmt + " (" + fmt + "–" + fmt + ")").format(statistics.median(vals), min(vals), max(vals))
lines = ["| system | conn/s without flood | conn/s with flood | with / without | SYN/s at the firewall | flows from spoofed sources after | all flows after | CPU busy % (softirq %) | failed connections in the flood |",
         "|---|---|---|---|---|---|---|---|---|"]
for s in order:
    rs = [r for r in rows if r[1] == s]
    base = [float(r[2]) for r in rs]; flood = [float(r[3]) for r in rs]
    ratio = [f / b if b else 0.0 for b, f in zip(base, flood)]
    spoofed = [float(r[5].split("/")[0]) for r in rs if r[5] != "-"]
    total = [float(r[5].split("/")[1]) for r in rs if r[5] != "-"]
    lines.append("| %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s |" % (
        s, cell(base), cell(flood), cell(ratio, "{:.2f}"), cell([float(r[4]) for r in rs]),
        cell(spoofed) if spoofed else "-", cell(total) if total else "-", cell([float(r[6]) for r in rs], "{:.0f}"),
        cell([float(r[7]) for r in rs], "{:.0f}"), cell([float(r[8]) for r in rs])))
text = ("# SYN-flood benchmark\n\n%s pass(es), %s s of connections per measurement, %s in flight, 1 s timeout; "
        "flows: the firewall's sessions (sluice) or conntrack entries (nft) after the flood, the legitimate "
        "connections' closed flows included.\n\n" % (passes, time_s, conc))
text += "\n".join(lines) + "\n"
rows_b = [l.rstrip("\n").split("\t") for l in open(sys.argv[6]) if l.strip()]
if rows_b:
    text += ("\n## (b) One source flooding with real connections (64 in flight from 198.18.100.201; "
             "legitimate: 16 sources, 8 in flight)\n\n"
             "| sluice screen | legitimate conn/s alone | legitimate conn/s with the flooder | with / without | flooder conn/s | new sessions refused by the limit |\n"
             "|---|---|---|---|---|---|\n")
    for label in dict.fromkeys(r[1] for r in rows_b):
        rs = [r for r in rows_b if r[1] == label]
        base = [float(r[2]) for r in rs]; legit = [float(r[3]) for r in rs]
        text += "| %s | %s | %s | %s | %s | %s |\n" % (label, cell(base), cell(legit),
            cell([l / b if b else 0.0 for b, l in zip(base, legit)], "{:.2f}"),
            cell([float(r[4]) for r in rs]), cell([float(r[5]) for r in rs]))
open(out, "w").write(text)
print(text)
PY
echo "bench-synflood: report in $OUT"
