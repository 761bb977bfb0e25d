#!/usr/bin/env bash
# /metrics (config `metrics: { listen }`, docs/operations.md "Metrics"):
#   - a real HTTP client (curl) in the LAN scrapes it through host-inbound's
#     `metrics` service; from the WAN zone, which does not list it, the same
#     port is dropped and counted (drop-host-inbound);
#   - before and after known traffic the counters moved by exactly the packets
#     sent: per reason (drop-policy-deny, -reject, -default, drop-filter) with
#     their L3 bytes, per policy (packets judged, sessions opened) and per
#     filter rule;
#   - the exposition passes `promtool check metrics` (Prometheus' own lint)
#     and parses with the Prometheus Python client's parser;
#   - `sluice show metrics` (the control socket) answers the same families,
#     `--json` too; a reload that moves the listener moves it, one whose
#     address cannot be bound is refused and the old listener keeps serving.
source "$(dirname "$0")/lib.sh"
it_init metrics mt
it_need_root_and_bpf
command -v promtool >/dev/null || it_skip "promtool is not installed (scripts/setup.sh installs the prometheus package)"
"$IT_PY" -c 'import prometheus_client' 2>/dev/null ||
    it_skip "python3-prometheus-client is not installed (scripts/setup.sh installs it)"
command -v curl >/dev/null || it_skip "curl is not installed (scripts/setup.sh installs it)"
it_topology_up

FW_LAN4=198.18.1.1
PORT=9109
PROM="$IT_DIR/prom_value.py"

write_config() {   # write_config FILE LISTEN
    cat >"$1" <<EOF
interfaces:
  lan0: { zone: trust, filter: lan-in }
  wan0: { zone: untrust }
zones:
  trust: { host-inbound: [metrics, ping] }
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
applications:
  open-udp: { protocol: udp, destination-port: 5000 }
  web: { protocol: tcp, destination-port: 8080 }
  closed-udp: { protocol: udp, destination-port: 6000 }
  refused-udp: { protocol: udp, destination-port: 6001 }
policies:
  - { name: lan-udp, from: trust, to: untrust, source: [lan-net], application: [open-udp, web], action: permit }
  - { name: lan-deny, from: trust, to: untrust, application: [closed-udp], action: deny }
  - { name: lan-reject, from: trust, to: untrust, application: [refused-udp], action: reject }
default-action: deny
filters:
  lan-in:
    - { name: udp-seen, protocol: udp, action: count }
    - { name: no-9999, protocol: udp, destination-port: 9999, action: drop }
metrics:
  listen: $2
EOF
}

cfg="$IT_TMP/fw.yaml"
write_config "$cfg" "$FW_LAN4:$PORT"
it_check "sluice check accepts metrics.listen and host-inbound metrics" "$SLUICE" check -c "$cfg"
it_sluice_start "$cfg"
it_server wan accept-server "$WAN4" 8080

scrape() {   # scrape FILE [ADDR:PORT]: GET /metrics from the LAN namespace
    lan curl -sS --max-time 5 -o "$1" -w '%{http_code}' "http://${2:-$FW_LAN4:$PORT}/metrics"
}
value() { "$IT_PY" "$PROM" "$@"; }
parses() { value "$@" >/dev/null; }   # parses FILE NAME LABELS...: the file parses and has that sample
delta() {   # delta NAME LABELS...: after - before
    local a b
    b=$(value "$IT_TMP/m0.txt" "$@") || { echo "missing-before"; return; }
    a=$(value "$IT_TMP/m1.txt" "$@") || { echo "missing-after"; return; }
    echo $((a - b))
}

# udp_send NS ADDR PORT COUNT SIZE FRESH: COUNT datagrams of SIZE bytes; FRESH=1
# sends each from a new socket (a new flow each), else all from one.
udp_send() {
    ip netns exec "$P-$1" "$IT_PY" -c '
import socket, sys
host, port, count, size, fresh = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(count):
    if fresh:
        s.close()
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x" * size, (host, port))
' "$2" "$3" "$4" "$5" "$6"
}

it_expect_eq "curl from the LAN gets /metrics (HTTP 200)" 200 "$(scrape "$IT_TMP/m0.txt")"
it_check "promtool check metrics accepts the exposition" sh -c "promtool check metrics <'$IT_TMP/m0.txt' >'$IT_TMP/promtool.txt' 2>&1"
[ -s "$IT_TMP/promtool.txt" ] && sed 's/^/  promtool: /' "$IT_TMP/promtool.txt"
it_check "the Prometheus client parses it (sluice_build_info)" parses "$IT_TMP/m0.txt" sluice_build_info
it_check "every family has HELP and TYPE" sh -c "! awk '/^# TYPE /{t[\$3]=1} /^# HELP /{h[\$3]=1} !/^#/{split(\$1,a,\"{\"); n=a[1]; if(!(n in t)||!(n in h)) bad=1} END{exit !bad}' '$IT_TMP/m0.txt'"

# Known traffic, all IPv4 UDP with 100-byte payloads: 128 L3 bytes each.
udp_send lan "$WAN4" 5000 6 100 1    # 6 new flows, permitted by lan-udp
udp_send lan "$WAN4" 5000 4 100 0    # 1 more flow, then 3 packets of it: only its first is judged
udp_send lan "$WAN4" 6000 9 100 0    # denied by lan-deny, every packet judged
udp_send lan "$WAN4" 6001 4 100 0    # rejected by lan-reject (ICMP port unreachable back)
udp_send lan "$WAN4" 6002 3 100 0    # no policy: the default
udp_send lan "$WAN4" 9999 5 100 0    # dropped by the filter before any policy
probe_out=$(probe lan "$WAN4" 8080)  # one TCP connection, permitted by lan-udp
it_expect_eq "the TCP connection goes through" connected "$probe_out"
sleep 0.5
it_expect_eq "the second scrape answers too" 200 "$(scrape "$IT_TMP/m1.txt")"

it_expect_eq "drop-policy-deny moved by the 9 denied datagrams" 9 \
    "$(delta sluice_packets_total reason=drop-policy-deny kind=drop)"
it_expect_eq "... and by their 9 x 128 L3 bytes" $((9 * 128)) "$(delta sluice_bytes_total reason=drop-policy-deny)"
it_expect_eq "drop-policy-reject moved by 4" 4 "$(delta sluice_packets_total reason=drop-policy-reject)"
it_expect_eq "reject-icmp-sent moved by 4" 4 "$(delta sluice_packets_total reason=reject-icmp-sent kind=info)"
it_expect_eq "drop-policy-default moved by 3" 3 "$(delta sluice_packets_total reason=drop-policy-default)"
it_expect_eq "drop-filter moved by 5, 5 x 128 bytes" "5 $((5 * 128))" \
    "$(delta sluice_packets_total reason=drop-filter) $(delta sluice_bytes_total reason=drop-filter)"
it_expect_eq "session-created moved by the 8 permitted flows (7 UDP, 1 TCP)" 8 \
    "$(delta sluice_packets_total reason=session-created)"

it_expect_eq "lan-udp judged 8 packets (each flow's first) and opened 8 sessions" "8 8" \
    "$(delta sluice_policy_packets_total policy=lan-udp) $(delta sluice_policy_sessions_opened_total policy=lan-udp)"
it_expect_eq "lan-deny judged all 9 datagrams, 9 x 128 bytes, opened none" "9 $((9 * 128)) 0" \
    "$(delta sluice_policy_packets_total policy=lan-deny) $(delta sluice_policy_bytes_total policy=lan-deny) $(delta sluice_policy_sessions_opened_total policy=lan-deny)"
it_expect_eq "lan-reject judged 4" 4 "$(delta sluice_policy_packets_total policy=lan-reject action=reject)"
it_expect_eq "the default action judged 3" 3 "$(delta sluice_policy_packets_total 'policy=(default)')"
it_expect_eq "filter rule no-9999 counted 5" 5 "$(delta sluice_filter_rule_packets_total filter=lan-in rule=no-9999)"
it_expect_eq "filter rule udp-seen (count) counted all 31 datagrams" 31 \
    "$(delta sluice_filter_rule_packets_total filter=lan-in rule=udp-seen action=count)"
it_expect_ge "the scrapes were accepted by host-inbound (trust, metrics)" \
    "$(value "$IT_TMP/m1.txt" sluice_host_inbound_packets_total zone=trust service=metrics verdict=accepted)" 1
it_expect_ge "sessions in the table: established TCP or active UDP flows" \
    "$(value "$IT_TMP/m1.txt" sluice_sessions family=ipv4 state=active)" 7

# Not from a zone that does not list the service.
sluice_fw show stats --json >"$IT_TMP/stats0.json"
wan curl -s --max-time 2 -o /dev/null "http://$FW_LAN4:$PORT/metrics"
rc=$?
it_expect_eq "curl from the WAN zone times out (rc 28: the SYN is dropped)" 28 "$rc"
sluice_fw show stats --json >"$IT_TMP/stats1.json"
it_expect_ge "drop-host-inbound counted the WAN's SYNs" \
    $(($(stat_value "$IT_TMP/stats1.json" drop-host-inbound) - $(stat_value "$IT_TMP/stats0.json" drop-host-inbound))) 1

# The control socket answers the same exposition.
sluice_fw show metrics >"$IT_TMP/show.txt"
it_check "show metrics prints the exposition (it parses, has the policy counters)" \
    parses "$IT_TMP/show.txt" sluice_policy_packets_total policy=lan-deny
sluice_fw show metrics --json >"$IT_TMP/show.json"
it_expect_eq "show metrics --json: lan-deny's packets as in the scrape" \
    "$(value "$IT_TMP/show.txt" sluice_policy_packets_total policy=lan-deny)" \
    "$("$IT_PY" -c '
import json, sys
for f in json.load(open(sys.argv[1])):
    if f["name"] == "sluice_policy_packets_total":
        for s in f["samples"]:
            if s["labels"]["policy"] == "lan-deny": print(int(s["value"]))
' "$IT_TMP/show.json")"

# Only GET and HEAD: any other method is refused at once with 405 and Allow
# (a POST without a body used to be read until the 2 s timeout, then 404).
lan curl -sS --max-time 5 -X POST -D "$IT_TMP/post.headers" -o "$IT_TMP/post.txt" -w '%{http_code}' \
    "http://$FW_LAN4:$PORT/metrics" >"$IT_TMP/post.code"
it_expect_eq "POST /metrics is answered 405" 405 "$(cat "$IT_TMP/post.code")"
it_check "... with Allow: GET, HEAD" grep -qi "^Allow: GET, HEAD" "$IT_TMP/post.headers"
it_expect_eq "HEAD /metrics is answered 200" 200 \
    "$(lan curl -sS --max-time 5 -I -o /dev/null -w '%{http_code}' "http://$FW_LAN4:$PORT/metrics")"

# A reload moves the listener; one that cannot bind is refused.
write_config "$cfg" "$FW_LAN4:$((PORT + 1))"
it_check "reload moves the listener to port $((PORT + 1))" sluice_fw reload
it_expect_eq "the new port answers" 200 "$(scrape "$IT_TMP/m2.txt" "$FW_LAN4:$((PORT + 1))")"
it_check "the old port is closed" sh -c "! ip netns exec $P-lan curl -s --max-time 2 -o /dev/null http://$FW_LAN4:$PORT/metrics"
write_config "$cfg" "198.18.77.1:$PORT"
reload_out=$(sluice_fw reload 2>&1)
it_check "a reload to an address the firewall does not have is refused, naming metrics.listen" \
    grep -q "metrics.listen" <<<"$reload_out"
it_expect_eq "the running listener still answers" 200 "$(scrape "$IT_TMP/m3.txt" "$FW_LAN4:$((PORT + 1))")"

it_finish
