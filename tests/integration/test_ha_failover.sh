#!/usr/bin/env bash
# The HA pair on the netns cluster (docs/ha.md; `sluice cluster up --topology
# cluster-ha`): fw0 (priority 200, preempt) carries the gateway group, fw1
# is standby. While flows run from the LAN host to the WAN host, IPv4 and
# IPv6 — an iperf3 transfer, a TCP connection with data both ways and a UDP
# flow (ha_flows.py), a ping, and the same TCP/UDP flows from a source-NATed
# LAN address — the pair goes through
#   (a) kill -9 of fw0's sluice together with its links going down: fw1 takes over;
#   (c) fw0 coming back (sluice first, then its links): it preempts once fw1's
#       sessions have arrived;
#   (b) `sluice ha failover` on fw0: fw1 takes the group over, fw0 stays standby.
# Every flow survives all three, byte-exact (SHA-256 of what came back equals
# what was sent); the NAT flows keep their translated address and port (the
# WAN server sees one peer per connection, the pool address); the standby
# forwarded nothing while standby (fw1 before (a), fw0 after (b)).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cluster_lib.sh"

it_init ha-failover hf
it_need_root_and_bpf
cl_init
cl_prefix hf
C=$CL_LAST
FLOWS="$IT_DIR/ha_flows.py"
PORT=9000
SECONDS_TOTAL=24
NAT4=198.18.1.11
NAT6=2001:2:0:1::11
POOL4=198.18.200.10
POOL6=2001:2:0:200::10

fw_sluice() { "$SLUICE" --netns "$C-$1" "${@:2}"; }
in_ns() { ip netns exec "$C-$1" "${@:2}"; }
role_of() {
    fw_sluice "$1" ha status --json 2>/dev/null | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)["groups"][0]["role"])'
}
role_is() { [ "$(role_of "$1")" = "$2" ]; }
# stat FW NAME: a datapath counter from `show stats --json`.
stat_of() {
    fw_sluice "$1" show stats --json 2>/dev/null |
        "$IT_PY" -c 'import json,sys; s=json.load(sys.stdin)["counters"]; print(s[sys.argv[1]])' "$2"
}

it_log "sluice cluster up --topology cluster-ha --prefix $C"
if ! "$SLUICE" cluster up --topology cluster-ha --prefix "$C" >"$IT_TMP/up.log" 2>&1; then
    cat "$IT_TMP/up.log"
    it_fail "cluster up --topology cluster-ha"
    it_finish
fi
it_pass "cluster up --topology cluster-ha (the probe reached the WAN host through the virtual addresses)"
it_wait_for "fw0 active" 50 role_is fw0 active
it_wait_for "fw1 standby" 50 role_is fw1 standby
it_expect_eq "fw0 carries the group" active "$(role_of fw0)"
it_expect_eq "fw1 is standby" standby "$(role_of fw1)"
it_check "fw0 holds the LAN virtual address" sh -c "ip -n $C-fw0 -br addr show lan0 | grep -q 198.18.1.254/24"
it_check "fw1 holds no virtual address" sh -c "! ip -n $C-fw1 -br addr show lan0 | grep -q 198.18.1.254"
it_check "fw0's lan0 has the virtual MAC" sh -c "ip -n $C-fw0 link show lan0 | grep -q 02:53:4c:00:01:01"
it_check "fw1's lan0 does not" sh -c "! ip -n $C-fw1 link show lan0 | grep -q 02:53:4c:00:01:01"

# Source NAT for the LAN host's second address, to a pool the WAN host
# routes to the pair's virtual WAN address; the ha: section is unchanged,
# so a reload takes it on both nodes.
CONFIG=/run/sluice/cluster/$C/sluice.yaml
cat >>"$CONFIG" <<EOF
nat:
  pools:
    vip-pool: { addresses: [$POOL4, "$POOL6"] }
  source:
    - { name: nat-host, from: trust, to: untrust, source: [$NAT4/32, "$NAT6/128"], translate: { pool: vip-pool } }
EOF
it_check "fw0 reloads the config with source NAT" fw_sluice fw0 reload
it_check "fw1 reloads the config with source NAT" fw_sluice fw1 reload
in_ns lan-host ip addr add $NAT4/24 dev eth0
in_ns lan-host ip addr add $NAT6/64 dev eth0 nodad
in_ns wan-host ip route add 198.18.200.0/24 via 198.18.100.254
in_ns wan-host ip -6 route add 2001:2:0:200::/64 via 2001:2:0:100::fe

# Servers on the WAN host (the iperf3 server runs already, port 5201 and a second one on 5202).
for addr in $WAN4 $WAN6; do
    it_bg "server-${addr//:/_}" in_ns wan-host "$IT_PY" "$FLOWS" server --bind "$addr" --port $PORT --ready "$IT_TMP/ready-${addr//:/_}"
    it_wait_for "flow server on $addr" 50 test -f "$IT_TMP/ready-${addr//:/_}"
done
it_bg iperf3-server-6 in_ns wan-host iperf3 -s -p 5202
sleep 0.5

fw1_forwarded_before=$(stat_of fw1 forward)
clients=()
start_client() {  # NAME HOST [BIND]
    it_bg "client-$1" in_ns lan-host "$IT_PY" "$FLOWS" client --host "$2" --port $PORT --seconds $SECONDS_TOTAL \
        --out "$IT_TMP/flow-$1.json" ${3:+--bind "$3"}
    clients+=("$1:$IT_LAST_PID")
}
start_client v4 $WAN4 $LAN4
start_client v6 $WAN6 $LAN6
start_client nat4 $WAN4 $NAT4
start_client nat6 $WAN6 $NAT6
it_bg iperf-v4 in_ns lan-host iperf3 -c $WAN4 -B $LAN4 -p 5201 -t $SECONDS_TOTAL -i 1 -b 200M -J
IPERF4=$IT_LAST_PID
it_bg iperf-v6 in_ns lan-host iperf3 -c $WAN6 -B $LAN6 -p 5202 -t $SECONDS_TOTAL -i 1 -b 200M -J
IPERF6=$IT_LAST_PID
it_bg ping-v4 in_ns lan-host ping -I $LAN4 -i 0.01 -w $((SECONDS_TOTAL + 1)) -q $WAN4
PING4=$IT_LAST_PID
it_bg ping-v6 in_ns lan-host ping -6 -I $LAN6 -i 0.01 -w $((SECONDS_TOTAL + 1)) -q $WAN6
PING6=$IT_LAST_PID
sleep 3

it_expect_eq "while standby, fw1 forwarded nothing (its forwarded counter did not move)" \
    "$fw1_forwarded_before" "$(stat_of fw1 forward)"
it_expect_ge "fw1 received the flows from fw0 (ha status: flows written)" \
    "$(fw_sluice fw1 ha status --json | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)["sync"]["flows_written"])')" 8
fw_sluice fw0 show sessions --json >"$IT_TMP/sessions-fw0.json"

# (a) fw0 dies: its sluice killed, its links down.
FW0_PID=$("$SLUICE" cluster status --prefix "$C" --json | "$IT_PY" -c 'import json,sys; print([p["pid"] for p in json.load(sys.stdin)["processes"] if p["name"]=="sluice-fw0"][0])')
it_log "(a) kill -9 fw0's sluice (pid $FW0_PID) and take its links down"
kill -9 "$FW0_PID"
for d in lan0 wan0 fab0; do in_ns fw0 ip link set "$d" down; done
it_wait_for "fw1 takes over" 50 role_is fw1 active
it_expect_eq "(a) fw1 carries the group" active "$(role_of fw1)"
sleep 3
fw_sluice fw1 show sessions --json >"$IT_TMP/sessions-fw1.json"

# (c) fw0 comes back: sluice first (it starts standby and takes the
# virtual MAC and addresses off its links), then its links.
it_log "(c) fw0 comes back"
it_bg sluice-fw0-again "$SLUICE" --netns "$C-fw0" run -c "$CONFIG" --node fw0
it_wait_for "fw0's sluice running" 100 grep -q "running (pid" "$IT_TMP/sluice-fw0-again.log"
for d in lan0 wan0 fab0; do in_ns fw0 ip link set "$d" up; done
it_wait_for "fw0 preempts" 100 role_is fw0 active
it_expect_eq "(c) fw0 carries the group again (preempt, after fw1's sessions arrived)" active "$(role_of fw0)"
it_wait_for "fw1 steps down" 50 role_is fw1 standby
sleep 3

# (b) planned switchover.
it_log "(b) sluice ha failover on fw0"
it_check "(b) sluice ha failover gateway" fw_sluice fw0 ha failover gateway
it_wait_for "fw1 takes the group" 50 role_is fw1 active
it_expect_eq "(b) fw1 carries the group" active "$(role_of fw1)"
it_wait_for "fw0 steps down" 50 role_is fw0 standby
it_expect_eq "(b) fw0 stays standby (a handed-over group is not preempted back)" standby "$(role_of fw0)"
it_check "(b) a second failover on the standby is refused" sh -c "! $SLUICE --netns $C-fw0 ha failover gateway"
fw0_forwarded=$(stat_of fw0 forward)
sleep 2
it_expect_eq "(b) fw0, standby again while the flows run, forwarded nothing" "$fw0_forwarded" "$(stat_of fw0 forward)"

for c in "${clients[@]}"; do
    name=${c%%:*} pid=${c##*:}
    wait "$pid"
    rc=$?
    cat "$IT_TMP/flow-$name.json" 2>/dev/null | sed "s/^/[$IT_NAME] $name: /"
    echo
    it_expect_eq "$name: the TCP flow survived every failover, byte-exact both ways (SHA-256)" 0 "$rc"
    it_check "$name: the UDP flow was answered after the last failover" "$IT_PY" -c '
import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["udp_answered"] >= r["udp_sent"] * 0.9 else 1)' "$IT_TMP/flow-$name.json"
done
for fam in 4 6; do
    pid_var=IPERF$fam
    wait "${!pid_var}"
    it_expect_eq "iperf3 IPv$fam finished without an error" 0 "$?"
    it_check "iperf3 IPv$fam: the last seconds carried data" "$IT_PY" -c '
import json,sys; d=json.load(open(sys.argv[1])); iv=d["intervals"]
sys.exit(0 if len(iv) >= 20 and all(i["sum"]["bytes"] > 0 for i in iv[-3:]) else 1)' "$IT_TMP/iperf-v$fam.log"
    pid_var=PING$fam
    wait "${!pid_var}"
    it_check "ping IPv$fam: answered to the end (less than 5 % lost)" "$IT_PY" -c '
import re,sys; t=open(sys.argv[1]).read(); m=re.search(r"(\d+) packets transmitted, (\d+) received", t)
sys.exit(0 if m and int(m.group(2)) >= int(m.group(1)) * 0.95 else 1)' "$IT_TMP/ping-v$fam.log"
    grep -h "packet loss" "$IT_TMP/ping-v$fam.log" | sed "s/^/[$IT_NAME] ping IPv$fam: /"
done

# The NAT flows: the WAN server saw one peer per connection, from the pool.
for fam in 4 6; do
    pool_var=POOL$fam
    addr_var=WAN$fam
    log="$IT_TMP/server-${!addr_var//:/_}.log"
    it_check "nat$fam: the WAN server saw the NAT flow from the pool address ${!pool_var}" grep -q "^tcp ${!pool_var} " "$log"
    it_expect_eq "nat$fam: one connection from the pool (its translated port never changed)" 1 "$(grep -c "^tcp ${!pool_var} " "$log")"
done
it_check "fw1 took fw0's NAT translation: the same pool port on both nodes" "$IT_PY" -c '
import json,sys
def nat(f):
    return sorted(s["nat"]["src"] for s in json.load(open(f))["sessions"] if "nat" in s and "src" in s["nat"]
                  and s["source"] in ("198.18.1.11", "2001:2:0:1::11") and s["protocol"] == "tcp")
a, b = nat(sys.argv[1]), nat(sys.argv[2])
print("fw0:", a, "fw1:", b)
sys.exit(0 if a and a == b else 1)' "$IT_TMP/sessions-fw0.json" "$IT_TMP/sessions-fw1.json"

it_check "show stats carries fw1's HA state" sh -c "$SLUICE --netns $C-fw1 show stats | grep -q '^ha: node fw1: gateway active'"
it_expect_eq "show stats --json: fw1's role" active "$(fw_sluice fw1 show stats --json | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)["ha"]["groups"][0]["role"])')"
fw_sluice fw1 ha status >"$IT_TMP/ha-status-fw1.txt" 2>&1
sed "s/^/[$IT_NAME] fw1: /" "$IT_TMP/ha-status-fw1.txt"
it_finish
