#!/usr/bin/env bash
# The HA pair when the fabric fails, and when it carries garbage (docs/ha.md
# "Split brain", "Messages"), on `sluice cluster up --topology cluster-ha`:
#   - fw1's fabric link goes down while both nodes live: the data-link
#     heartbeats keep the peer alive, so neither node changes role (no second
#     active node) and traffic keeps flowing through fw0; session sync stops
#     and is counted; a flow opened meanwhile reaches fw1 by the bulk sync
#     once the fabric is back.
#   - datagrams on the fabric port from the peer's own address that are
#     truncated, of another magic or version, or carry an impossible record
#     are refused and counted by reason, and nothing reaches fw1's session
#     table; a datagram from another port of the peer is dropped as not-from-peer.
#   - monitored interfaces (no `monitor:` key: the group's own): the standby's
#     LAN link down makes its priority 0 and the active node refuses to hand
#     over to it; the active node's WAN link down makes fw1 take over (the
#     ping goes on through it); the link back, fw0 preempts again.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cluster_lib.sh"

it_init ha-fabric-loss hl
it_need_root_and_bpf
cl_init
cl_prefix hl
C=$CL_LAST

fw_sluice() { "$SLUICE" --netns "$C-$1" "${@:2}"; }
in_ns() { ip netns exec "$C-$1" "${@:2}"; }
ha_field() {  # FW PYTHON-EXPRESSION over the status JSON `s`
    fw_sluice "$1" ha status --json 2>/dev/null | "$IT_PY" -c 'import json,sys; s=json.load(sys.stdin); print(eval(sys.argv[1]))' "$2"
}
role_of() { ha_field "$1" 's["groups"][0]["role"]'; }
role_is() { [ "$(role_of "$1")" = "$2" ]; }
sessions_to() {  # FW DEST-PORT: entries of flows to that port in FW's table
    fw_sluice "$1" show sessions --json 2>/dev/null |
        "$IT_PY" -c 'import json,sys; print(sum(1 for s in json.load(sys.stdin)["sessions"] if s["destination_port"] == int(sys.argv[1])))' "$2"
}

if ! "$SLUICE" cluster up --topology cluster-ha --prefix "$C" >"$IT_TMP/up.log" 2>&1; then
    cat "$IT_TMP/up.log"
    it_fail "cluster up --topology cluster-ha"
    it_finish
fi
it_wait_for "fw0 active" 50 role_is fw0 active
it_wait_for "fw1 standby" 50 role_is fw1 standby

# --- fabric loss, both nodes alive ---
transitions_before=$(ha_field fw1 's["groups"][0]["transitions"]')
it_bg ping in_ns lan-host ping -i 0.02 -w 6 -q 198.18.100.200
PING=$IT_LAST_PID
it_log "fw1's fabric link goes down"
in_ns fw1 ip link set fab0 down
sleep 2
it_expect_eq "fabric down: fw0 still carries the group" active "$(role_of fw0)"
it_expect_eq "fabric down: fw1 stays standby (no second active node)" standby "$(role_of fw1)"
it_expect_eq "fabric down: fw1 made no transition" "$transitions_before" "$(ha_field fw1 's["groups"][0]["transitions"]')"
it_expect_eq "fabric down: fw1 sees the peer alive (data-link heartbeats)" True "$(ha_field fw1 's["peer"]["alive"]')"
it_expect_eq "fabric down: fw1 knows the fabric is silent" False "$(ha_field fw1 's["peer"]["fabric_alive"]')"
it_check "fabric down: fw1 keeps hearing heartbeats on the data links" sh -c \
    "a=\$($SLUICE --netns $C-fw1 ha status --json | $IT_PY -c 'import json,sys; print(json.load(sys.stdin)[\"heartbeats\"][\"received_link\"])'); sleep 0.5; b=\$($SLUICE --netns $C-fw1 ha status --json | $IT_PY -c 'import json,sys; print(json.load(sys.stdin)[\"heartbeats\"][\"received_link\"])'); [ \$b -gt \$a ]"
it_check "fabric down: fw1 holds no virtual address" sh -c "! ip -n $C-fw1 -br addr show lan0 | grep -q 198.18.1.254"
# A flow opened while the fabric is down: fw0 cannot send it.
it_bg accept-server in_ns wan-host "$IT_PY" "$IT_CHAT" accept-server --bind 198.18.100.200 --port 8123 --ready "$IT_TMP/accept-ready"
it_wait_for "accept server" 50 test -f "$IT_TMP/accept-ready"
it_bg conn in_ns lan-host "$IT_PY" -c '
import socket,time
s=socket.create_connection(("198.18.100.200", 8123), timeout=5); time.sleep(20)'
sleep 1
it_expect_ge "fabric down: fw0 has the new flow" "$(sessions_to fw0 8123)" 1
it_expect_eq "fabric down: fw1 does not" 0 "$(sessions_to fw1 8123)"
it_expect_ge "fabric down: fw0 counts the changes it could not send" "$(ha_field fw0 's["sync"]["not_sent_no_peer"]')" 1
wait "$PING"
it_check "fabric down: the ping through fw0 kept its answers (under 5 % lost)" "$IT_PY" -c '
import re,sys; t=open(sys.argv[1]).read(); m=re.search(r"(\d+) packets transmitted, (\d+) received", t)
sys.exit(0 if m and int(m.group(2)) >= int(m.group(1)) * 0.95 else 1)' "$IT_TMP/ping.log"
it_log "fw1's fabric link comes back"
in_ns fw1 ip link set fab0 up
it_wait_for "the bulk sync brings the flow to fw1" 50 sh -c "[ \$($SLUICE --netns $C-fw1 show sessions --json | $IT_PY -c 'import json,sys; print(sum(1 for s in json.load(sys.stdin)[\"sessions\"] if s[\"destination_port\"] == 8123))') -ge 1 ]"
it_expect_ge "fabric back: fw1 has the flow opened while it was down (bulk sync)" "$(sessions_to fw1 8123)" 1
it_expect_eq "fabric back: fw0 still carries the group" active "$(role_of fw0)"
it_expect_eq "fabric back: fw1 made no transition" "$transitions_before" "$(ha_field fw1 's["groups"][0]["transitions"]')"

# --- malformed datagrams from the peer's fabric address ---
written_before=$(ha_field fw1 's["sync"]["flows_written"]')
entries_before=$(fw_sluice fw1 show sessions --json | "$IT_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')
it_check "datagrams sent from fw0's fabric address" in_ns fw0 "$IT_PY" -c '
import socket, struct
def header(magic=b"SLHA", version=1, mtype=2, count=1, body=b""):
    length = 24 + len(body)
    return magic + struct.pack("!BBBBHHIII", version, mtype, 1, 0, length, count, 99, 0, 0) + body
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.2.1", 4790))
peer = ("198.18.2.2", 4790)
s.sendto(b"SLHA\x01", peer)                                    # truncated
s.sendto(header(magic=b"XXXX", body=bytes(136)), peer)        # bad magic
s.sendto(header(version=9, body=bytes(136)), peer)            # bad version
s.sendto(header(body=bytes(136)), peer)                       # a record of family 0: bad record
o = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
o.bind(("198.18.2.1", 4791))
o.sendto(header(mtype=1, count=0), peer)                      # the right address, another port
'
sleep 0.5
for reason in truncated bad-magic bad-version bad-record not-from-peer; do
    it_expect_ge "malformed: fw1 refused and counted $reason" "$(ha_field fw1 "s['rejected']['$reason']")" 1
done
it_expect_eq "malformed: fw1 wrote no flow from them" "$written_before" "$(ha_field fw1 's["sync"]["flows_written"]')"
it_expect_eq "malformed: fw1's session table did not change" "$entries_before" \
    "$(fw_sluice fw1 show sessions --json | "$IT_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')"
it_expect_eq "malformed: fw1 still standby" standby "$(role_of fw1)"

# --- monitored interfaces ---
effective() { ha_field "$1" 's["groups"][0]["effective_priority"]'; }
effective_is() { [ "$(effective "$1")" = "$2" ]; }
peer_priority_is() { [ "$(ha_field "$1" 's["groups"][0]["peer"]["priority"]')" = "$2" ]; }
it_log "monitor: fw1's (the standby's) lan0 goes down"
in_ns fw1 ip link set lan0 down
it_wait_for "fw1's effective priority 0" 50 effective_is fw1 0
it_expect_eq "monitor: fw1 with lan0 down has effective priority 0" 0 "$(effective fw1)"
it_wait_for "fw0 sees it" 50 peer_priority_is fw0 0
it_check "monitor: fw0 refuses to hand over to a peer with a monitored link down" sh -c \
    "! $SLUICE --netns $C-fw0 ha failover gateway"
it_expect_eq "monitor: fw0 still carries the group" active "$(role_of fw0)"
in_ns fw1 ip link set lan0 up
it_wait_for "fw1's priority back" 50 effective_is fw1 100

it_log "monitor: fw0's (the active node's) wan0 goes down"
fw1_transitions=$(ha_field fw1 's["groups"][0]["transitions"]')
in_ns fw0 ip link set wan0 down
it_wait_for "fw1 takes over" 50 role_is fw1 active
it_expect_eq "monitor: fw1 took the group from fw0 with wan0 down" active "$(role_of fw1)"
it_wait_for "fw0 steps down" 50 role_is fw0 standby
it_expect_eq "monitor: fw0 stepped down" standby "$(role_of fw0)"
it_check "monitor: the LAN host reaches the WAN host through fw1" in_ns lan-host ping -c 3 -i 0.2 -W 1 -q 198.18.100.200
in_ns fw0 ip link set wan0 up
it_wait_for "fw0 preempts again" 100 role_is fw0 active
it_expect_eq "monitor: fw0 preempted once wan0 was back" active "$(role_of fw0)"
it_wait_for "fw1 standby again" 50 role_is fw1 standby
it_expect_ge "monitor: fw1 made two transitions (up and down again)" \
    "$(ha_field fw1 's["groups"][0]["transitions"]')" $((fw1_transitions + 2))
it_finish
