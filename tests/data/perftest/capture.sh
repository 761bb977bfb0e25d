#!/usr/bin/env bash
# How the fixtures in this folder were captured (run as root from the repo
# root; SLUICE=path/to/sluice). Traffic stays inside namespaces this script
# creates, on 198.18.0.0/15 and 2001:2::/48 (scripts/lib/topology.sh: sluice cluster up --topology single --bare).
#
#   iperf3_ipv4_single.json   -P 1, IPv4, plain forwarding
#   iperf3_ipv6_single.json   -P 1, IPv6
#   iperf3_ipv4_multi.json    -P 4, IPv4
#   iperf3_ipv6_multi.json    -P 4, IPv6
#   iperf3_error_refused.json no server on the port: iperf3's `error` result
#   iperf3_server_ipv4.json   the server's own -J (-s -1), IPv4 client, -t 1
#   iperf3_server_ipv6.json   the same, IPv6
#   perf_report_ipv4.txt      perf report --no-children --sort=symbol --stdio
#                             of perf record -a -g --freq=997 (10 s) while
#                             iperf3 -P 4 ran through sluice
set -euo pipefail
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
D=tests/data/perftest
source scripts/lib/topology.sh
P=pfx$$
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    "$SLUICE" --netns "$P-fw" down >/dev/null 2>&1 || true
    topology_down "$P"
    rm -rf "$TMP"
}
trap cleanup EXIT
topology_up "$P"

ip netns exec "$P-wan" iperf3 -s -p 5201 >"$TMP/server.log" 2>&1 &
PIDS+=($!)
sleep 1
if [ "${PERF_ONLY:-0}" != 1 ]; then
    ip netns exec "$P-lan" iperf3 -c 198.18.100.200 -p 5201 -t 2 -P 1 -J >$D/iperf3_ipv4_single.json
    ip netns exec "$P-lan" iperf3 -6 -c 2001:2:0:100::200 -p 5201 -t 2 -P 1 -J >$D/iperf3_ipv6_single.json
    ip netns exec "$P-lan" iperf3 -c 198.18.100.200 -p 5201 -t 2 -P 4 -J >$D/iperf3_ipv4_multi.json
    ip netns exec "$P-lan" iperf3 -6 -c 2001:2:0:100::200 -p 5201 -t 2 -P 4 -J >$D/iperf3_ipv6_multi.json
    ip netns exec "$P-lan" iperf3 -c 198.18.100.200 -p 5299 -t 2 -P 1 -J >$D/iperf3_error_refused.json || true
    for f in 4 6; do
        t=198.18.100.200
        [ $f = 6 ] && t=2001:2:0:100::200
        ip netns exec "$P-wan" iperf3 -s -1 -p 5202 -J >$D/iperf3_server_ipv$f.json &
        sleep 0.5
        ip netns exec "$P-lan" iperf3 -c $t -p 5202 -t 1 -J >/dev/null
        wait $!
    done
fi

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
"$SLUICE" --netns "$P-fw" run -c "$TMP/fw.yaml" >"$TMP/sluice.log" 2>&1 &
SPID=$!
PIDS+=("$SPID")
for _ in $(seq 100); do grep -q "running (pid $SPID)" "$TMP/sluice.log" && break; sleep 0.2; done
ip netns exec "$P-lan" iperf3 -c 198.18.100.200 -p 5201 -t 20 -P 4 >"$TMP/client.log" 2>&1 &
CPID=$!
PIDS+=("$CPID")
sleep 2
ip netns exec "$P-fw" perf record -a -g --freq=997 -o "$TMP/perf.data" -- sleep 10 2>"$TMP/perf.err"
ip netns exec "$P-fw" perf report --no-children --sort=symbol --stdio -i "$TMP/perf.data" 2>/dev/null \
    >$D/perf_report_ipv4.txt
wait "$CPID" || true
