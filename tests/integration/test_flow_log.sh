#!/usr/bin/env bash
# Flow logs (config `log:` per policy, `default-log:`, `flow-log:`;
# docs/operations.md "Flow logs"): JSON lines in a file.
#   - open: the tuple as sent, the source NAT it got, policy, zones, interface;
#   - close (by the session GC after the UDP timeout, or after a TCP close):
#     packets and bytes each way, exactly what was sent, duration, reason;
#   - deny: for a deny policy, a reject policy and the default action, the
#     tuple (IPv4 and IPv6), the policy and the drop reason;
#   - a policy without `log` writes nothing;
#   - a flood of denied packets past the rate limit: every one of them is
#     either written or counted as dropped (flow-log-event-rate-limited /
#     -ring-full), none lost silently, and the datapath's verdicts are the
#     same (drop-policy-deny moved by exactly the flood; a permitted flow
#     still passes);
#   - a reload to a flow-log path in a missing directory is refused and
#     changes nothing: lines keep coming to the old file.
source "$(dirname "$0")/lib.sh"
it_init flow-log fg
it_need_root_and_bpf
it_topology_up

FW_WAN4=198.18.100.1
LOG="$IT_TMP/flows.jsonl"

write_config() {   # write_config FILE LOG_PATH
    cat >"$1" <<EOF
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
applications:
  echo-udp: { protocol: udp, destination-port: 5000 }
  web: { protocol: tcp, destination-port: 8080 }
  closed-udp: { protocol: udp, destination-port: 6000 }
  refused-udp: { protocol: udp, destination-port: 6001 }
  quiet-udp: { protocol: udp, destination-port: 7000 }
policies:
  - { name: lan-out, from: trust, to: untrust, source: [lan-net], application: [echo-udp, web], action: permit,
      log: { open: true, close: true } }
  - { name: lan-deny, from: trust, to: untrust, application: [closed-udp], action: deny, log: [deny] }
  - { name: lan-reject, from: trust, to: untrust, application: [refused-udp], action: reject, log: { deny: true } }
  - { name: lan-quiet, from: trust, to: untrust, application: [quiet-udp], action: permit }
default-action: deny
default-log: { deny: true }
timeouts: { udp: 2s, tcp-closing: 1s, tcp-time-wait: 1s }
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
flow-log:
  output: file
  path: $2
  rate-limit: 200
  burst: 50
EOF
}

cfg="$IT_TMP/fw.yaml"
write_config "$cfg" "$LOG"
it_check "sluice check accepts the flow-log config" "$SLUICE" check -c "$cfg"
it_sluice_start "$cfg"
it_check "the daemon logged where the flow log goes" grep -q "flow log: file $LOG" "$SLUICE_LOG"

# A UDP echo server in the WAN: each datagram comes back as it was.
it_bg udp-echo ip netns exec "$P-wan" "$IT_PY" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.100.200", 5000))
while True:
    data, peer = s.recvfrom(4096)
    s.sendto(data, peer)
'
it_server wan accept-server "$WAN4" 8080

# lines EVENT [KEY=VALUE...]: the log's lines of EVENT whose fields match, one JSON per line.
lines() {
    "$IT_PY" - "$LOG" "$@" <<'EOF'
import json, sys
path, event, *conds = sys.argv[1:]
want = dict(c.split("=", 1) for c in conds)
for line in open(path):
    e = json.loads(line)
    if e["event"] == event and all(str(e.get(k)) == v for k, v in want.items()):
        print(json.dumps(e, sort_keys=True))
EOF
}
field() { "$IT_PY" -c 'import json,sys; e=json.loads(sys.stdin.readline()); print(eval("e" + sys.argv[1]))' "$1"; }

# 1. A UDP flow with NAT: 5 datagrams of 100 bytes each way from one socket.
sport=$(ip netns exec "$P-lan" "$IT_PY" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.1.10", 0)); s.settimeout(2)
for _ in range(5):
    s.sendto(b"x" * 100, ("198.18.100.200", 5000)); s.recvfrom(4096)
print(s.getsockname()[1])
')
it_check "the UDP exchange completed (5 echoes)" test -n "$sport"
it_wait_for "the open line" 25 sh -c "grep -q '\"event\":\"open\"' '$LOG'"
open=$(lines open protocol=udp src=198.18.1.10 src_port="$sport" dst=198.18.100.200 dst_port=5000)
it_expect_eq "one open line for the flow" 1 "$(grep -c . <<<"$open")"
it_expect_eq "open: policy, zones, interface, action" "lan-out trust untrust lan0 permit" \
    "$(field '["policy"]' <<<"$open") $(field '["zone_in"]' <<<"$open") $(field '["zone_out"]' <<<"$open") $(field '["interface"]' <<<"$open") $(field '["action"]' <<<"$open")"
it_expect_eq "open: the source NAT to the firewall's WAN address" "$FW_WAN4" "$(field '["nat"]["src"]' <<<"$open")"
natport=$(field '["nat"]["src_port"]' <<<"$open")
it_expect_ge "open: a translated source port" "$natport" 1
it_expect_eq "open: the first packet's 128 L3 bytes" 128 "$(field '["bytes"]' <<<"$open")"

# The session expires after 2 s idle (udp timeout); the GC logs the close.
it_wait_for "the close line" 50 sh -c "grep -q '\"event\":\"close\".*\"src_port\":$sport' '$LOG'"
close=$(lines close protocol=udp src=198.18.1.10 src_port="$sport")
it_expect_eq "one close line for the flow" 1 "$(grep -c . <<<"$close")"
it_expect_eq "close: 5 packets, 640 bytes out; 5 packets, 640 bytes back" "5 640 5 640" \
    "$(field '["packets_out"]' <<<"$close") $(field '["bytes_out"]' <<<"$close") $(field '["packets_in"]' <<<"$close") $(field '["bytes_in"]' <<<"$close")"
it_expect_eq "close: policy, NAT port, reason" "lan-out $natport idle-timeout" \
    "$(field '["policy"]' <<<"$close") $(field '["nat"]["src_port"]' <<<"$close") $(field '["close_reason"]' <<<"$close")"
it_check "close: the duration runs to the last packet, not the 2 s idle timeout" \
    "$IT_PY" -c "import sys; sys.exit(0 if 0 <= float('$(field '["duration_s"]' <<<"$close")') < 2.0 else 1)"

# 2. A TCP connection, opened and closed: open and close (fin) lines.
it_expect_eq "a TCP connection goes through" connected "$(probe lan "$WAN4" 8080)"
it_wait_for "the TCP close line" 50 sh -c "grep -q '\"event\":\"close\".*\"protocol\":\"tcp\"' '$LOG'"
tcp_close=$(lines close protocol=tcp dst=198.18.100.200 dst_port=8080 | head -1)
it_expect_eq "TCP close: ended by FIN" fin "$(field '["close_reason"]' <<<"$tcp_close")"
it_expect_ge "TCP close: the handshake and the FINs counted out" "$(field '["packets_out"]' <<<"$tcp_close")" 3

# 3. Denies: a deny policy, a reject policy, the default action; IPv4 and IPv6.
udp_send() {   # udp_send ADDR PORT COUNT
    ip netns exec "$P-lan" "$IT_PY" -c '
import socket, sys
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(count):
    s.sendto(b"x" * 100, (host, port))
' "$@"
}
udp_send "$WAN4" 6000 1
udp_send "$WAN6" 6000 1
udp_send "$WAN4" 6001 1
udp_send "$WAN4" 6002 1
udp_send "$WAN4" 7000 3     # lan-quiet: permitted, logs nothing
sleep 1
it_expect_eq "deny (IPv4): lan-deny, drop-policy-deny" "lan-deny deny drop-policy-deny 128" \
    "$(lines deny dst=198.18.100.200 dst_port=6000 | "$IT_PY" -c 'import json,sys; e=json.loads(sys.stdin.readline()); print(e["policy"], e["action"], e["reason"], e["bytes"])')"
it_expect_eq "deny (IPv6): the IPv6 tuple" "lan-deny ipv6 2001:2:0:1::10 148" \
    "$(lines deny dst=2001:2:0:100::200 dst_port=6000 | "$IT_PY" -c 'import json,sys; e=json.loads(sys.stdin.readline()); print(e["policy"], e["family"], e["src"], e["bytes"])')"
it_expect_eq "reject: lan-reject, drop-policy-reject" "lan-reject reject drop-policy-reject" \
    "$(lines deny dst_port=6001 | "$IT_PY" -c 'import json,sys; e=json.loads(sys.stdin.readline()); print(e["policy"], e["action"], e["reason"])')"
it_expect_eq "default: (default), drop-policy-default" "(default) drop-policy-default" \
    "$(lines deny dst_port=6002 | "$IT_PY" -c 'import json,sys; e=json.loads(sys.stdin.readline()); print(e["policy"], e["reason"])')"
it_expect_eq "lan-quiet (no log:) wrote no line" 0 "$(lines open dst_port=7000 | grep -c .)"

# 4. A flood of denied datagrams past the rate limit (200/s per CPU, burst 50).
FLOOD=3000
sluice_fw show stats --json >"$IT_TMP/stats0.json"
deny0=$(lines deny dst_port=6000 | grep -c .)
udp_send "$WAN4" 6000 $FLOOD
sleep 1
it_expect_eq "a permitted flow still passes during the flood's aftermath" answered \
    "$(udp_probe lan "$WAN4" 5000)"
sleep 1
sluice_fw show stats --json >"$IT_TMP/stats1.json"
d() { echo $(($(stat_value "$IT_TMP/stats1.json" "$1") - $(stat_value "$IT_TMP/stats0.json" "$1"))); }
written=$(($(lines deny dst_port=6000 | grep -c .) - deny0))
limited=$(d flow-log-event-rate-limited)
ringfull=$(d flow-log-event-ring-full)
it_expect_eq "the datapath dropped every one of the $FLOOD (drop-policy-deny)" $FLOOD "$(d drop-policy-deny)"
it_expect_ge "the rate limit refused events" "$limited" 1
it_expect_eq "written + rate-limited + ring-full = $FLOOD: none lost silently ($written + $limited + $ringfull)" \
    $FLOOD $((written + limited + ringfull))
it_check "fewer lines than packets were written" test "$written" -lt $FLOOD

# 5. A reload to a path that cannot be opened is refused; logging goes on.
write_config "$cfg" "$IT_TMP/missing-dir/flows.jsonl"
reload_out=$(sluice_fw reload 2>&1)
it_check "the reload is refused, naming flow-log and the path" grep -q "flow-log.*missing-dir" <<<"$reload_out"
before=$(grep -c . "$LOG")
udp_send "$WAN4" 6002 1
it_wait_for "a line after the refused reload" 25 sh -c "[ \$(grep -c . '$LOG') -gt $before ]"
it_check "the log still receives lines" test "$(grep -c . "$LOG")" -gt "$before"

it_finish
