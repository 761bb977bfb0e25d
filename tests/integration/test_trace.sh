#!/usr/bin/env bash
# The packet tracer (`sluice trace`, docs/operations.md "Packet tracer"):
# for each case the trace's verdict and deciding rule are the same as what
# the datapath does when the packet is really sent:
#   - permit with source NAT: forward to wan0, policy lan-out, a session
#     with the firewall's WAN address (the real flow gets the same);
#   - deny: drop, drop-policy-deny, policy lan-deny;
#   - reject: answered (XDP_TX), drop-policy-reject, policy lan-reject (the
#     real connection is refused);
#   - filter: drop, drop-filter, rule no-9999 (before any policy);
#   - the default action;
#   - a packet of an established flow: its session, no policy;
#   - a pcap of two datagrams of one flow traced in order: the second
#     meets the session the first opened.
# Tracing changes nothing: the live counters and the session table are the
# same before and after every trace. Misuse is refused with a reason: an
# unknown interface, mixed families, no packet, options that are not part of
# the packet (ports of an ICMP packet, fields beside --pcap).
source "$(dirname "$0")/lib.sh"
it_init trace tr
it_need_root_and_bpf
it_topology_up

cat >"$IT_TMP/fw.yaml" <<EOF
interfaces:
  lan0: { zone: trust, filter: lan-in }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
applications:
  web: { protocol: tcp, destination-port: 8080 }
  open-udp: { protocol: udp, destination-port: 5000 }
  closed-udp: { protocol: udp, destination-port: 6000 }
  refused: { protocol: tcp, destination-port: 7001 }
policies:
  - { name: lan-out, from: trust, to: untrust, source: [lan-net], application: [web, open-udp], action: permit }
  - { name: lan-deny, from: trust, to: untrust, application: [closed-udp], action: deny }
  - { name: lan-reject, from: trust, to: untrust, application: [refused], action: reject }
default-action: deny
filters:
  lan-in:
    - { name: no-9999, protocol: udp, destination-port: 9999, action: drop }
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
EOF
it_sluice_start "$IT_TMP/fw.yaml"
it_server wan accept-server "$WAN4" 8080
FW_WAN4=198.18.100.1

# trace ARGS...: sluice trace --json in the firewall's namespace; saves to $IT_TMP/t.json.
trace() { sluice_fw trace --json "$@" >"$IT_TMP/t.json" 2>"$IT_TMP/t.err" || cat "$IT_TMP/t.err"; }
tf() {   # tf EXPR: a field of the first traced packet (python expression on p)
    "$IT_PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["packets"][int(sys.argv[3])]; v=eval(sys.argv[2]); print("null" if v is None else v)' \
        "$IT_TMP/t.json" "$1" "${2:-0}"
}
live_state() {   # the live counters a traced packet would move, and the sessions: a trace changes neither
    # (the lab's own IPv6 link traffic moves rx and the pass counters meanwhile: left out)
    sluice_fw show stats --json | "$IT_PY" -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print({k: v for k, v in c.items() if k in ("forward", "session-created", "nat-port-allocated", "fib-lookup",
      "drop-policy-deny", "drop-policy-default", "drop-policy-reject", "drop-filter", "reject-tcp-rst-sent",
      "flow-cache-hit", "session-hit")})'
    sluice_fw show sessions --json | "$IT_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))'
}
stats_delta() {   # stats_delta BEFORE AFTER COUNTER
    "$IT_PY" -c 'import json,sys; a=json.load(open(sys.argv[1]))["counters"]; b=json.load(open(sys.argv[2]))["counters"]; print(b[sys.argv[3]]-a[sys.argv[3]])' "$@"
}
udp_send() {   # udp_send ADDR PORT: one datagram from the LAN host
    ip netns exec "$P-lan" "$IT_PY" -c 'import socket,sys; s=socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x"*100, (sys.argv[1], int(sys.argv[2])))' "$1" "$2"
}

# 1. Permit with source NAT.
live_state >"$IT_TMP/live0"
trace --in lan0 --src "$LAN4" --dst "$WAN4" --protocol tcp --sport 41000 --dport 8080 --flags S
live_state >"$IT_TMP/live1"
it_check "tracing changed no live counter and no session" cmp -s "$IT_TMP/live0" "$IT_TMP/live1"
it_expect_eq "permit: forward to wan0" "forward wan0" "$(tf 'p["verdict"]') $(tf 'p["egress_interface"]')"
it_expect_eq "permit: decided by lan-out, a session created" "lan-out permit created" \
    "$(tf 'p["policy"]["name"]') $(tf 'p["policy"]["action"]') $(tf 'p["session"]')"
it_expect_eq "permit: source NAT to the WAN address" "$FW_WAN4" "$(tf 'p["nat"]["src"]')"
it_expect_eq "the real SYN: connected" connected "$(probe lan "$WAN4" 8080)"
sluice_fw show sessions --json >"$IT_TMP/sessions.json"
it_expect_eq "the real flow got the same policy and translated address" "lan-out $FW_WAN4" \
    "$("$IT_PY" -c '
import json, sys
for s in json.load(open(sys.argv[1]))["sessions"]:
    if s["protocol"] == "tcp" and s["destination_port"] == 8080 and not s.get("reply"):
        print(s["policy"], s["nat"]["src"].rsplit(":", 1)[0]); break
' "$IT_TMP/sessions.json")"

# 2. Deny, 3. reject, 4. filter, 5. default: trace, then send it for real.
for case in "deny udp 6000 lan-deny drop drop-policy-deny" \
            "default udp 6002 (default) drop drop-policy-default" \
            "filter udp 9999 null drop drop-filter"; do
    set -- $case
    trace --in lan0 --src "$LAN4" --dst "$WAN4" --protocol "$2" --sport 42000 --dport "$3"
    it_expect_eq "$1: the trace says $5 under $6" "$5 $6" "$(tf 'p["verdict"]') $(tf 'p["reason"]')"
    it_expect_eq "$1: decided by policy $4" "$4" "$(tf 'p["policy"]["name"] if p["policy"] else None')"
    sluice_fw show stats --json >"$IT_TMP/s0.json"
    udp_send "$WAN4" "$3"
    sleep 0.3
    sluice_fw show stats --json >"$IT_TMP/s1.json"
    it_expect_eq "$1: the real datagram was counted under $6 too" 1 "$(stats_delta "$IT_TMP/s0.json" "$IT_TMP/s1.json" "$6")"
done
trace --in lan0 --src "$LAN4" --dst "$WAN4" --protocol udp --sport 42000 --dport 9999
it_expect_eq "filter: the rule that decided is no-9999 (drop)" "no-9999 drop" \
    "$(tf 'p["filter_rule"]["rule"]') $(tf 'p["filter_rule"]["action"]')"

trace --in lan0 --src "$LAN4" --dst "$WAN4" --protocol tcp --sport 43000 --dport 7001 --flags S
it_expect_eq "reject: the trace answers (XDP_TX) under drop-policy-reject, policy lan-reject" \
    "reject XDP_TX drop-policy-reject lan-reject" \
    "$(tf 'p["verdict"]') $(tf 'p["xdp_action"]') $(tf 'p["reason"]') $(tf 'p["policy"]["name"]')"
it_expect_eq "the real connection is refused" refused "$(probe lan "$WAN4" 7001)"

# IPv6 (no NAT for it): deny.
trace --in lan0 --src "$LAN6" --dst "$WAN6" --protocol udp --sport 42000 --dport 6000
it_expect_eq "IPv6 deny: drop under drop-policy-deny by lan-deny" "drop drop-policy-deny lan-deny" \
    "$(tf 'p["verdict"]') $(tf 'p["reason"]') $(tf 'p["policy"]["name"]')"

# 6. A packet of a live established flow: it meets its session.
# A client that keeps its connection open (the server accepts and closes;
# the client's half stays established from the firewall's view until it answers).
it_bg holder ip netns exec "$P-lan" "$IT_PY" -c '
import socket, sys, time
s = socket.create_connection(("198.18.100.200", 8080))
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
time.sleep(60)
' "$IT_TMP/holder.port"
it_wait_for "the held connection" 50 test -s "$IT_TMP/holder.port"
sport=$(cat "$IT_TMP/holder.port")
trace --in lan0 --src "$LAN4" --dst "$WAN4" --protocol tcp --sport "$sport" --dport 8080 --flags A
it_expect_eq "established: its session decides, no policy runs" "existing null" \
    "$(tf 'p["session"]') $(tf 'p["policy"]')"

# 7. A pcap of two datagrams of one flow: the first opens a session in the trace, the second meets it.
"$IT_PY" - "$IT_TMP/conv.pcap" <<'EOF'
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
d = Ether(src="02:00:5e:1c:00:01", dst="ff:ff:ff:ff:ff:ff") / IP(src="198.18.1.10", dst="198.18.100.200") / UDP(sport=44000, dport=5000) / Raw(b"x" * 32)
wrpcap(sys.argv[1], [d, d])
EOF
trace --in lan0 --pcap "$IT_TMP/conv.pcap"
it_expect_eq "pcap: the first datagram opens a session by lan-out" "created lan-out" "$(tf 'p["session"]') $(tf 'p["policy"]["name"]')"
it_expect_eq "pcap: the second meets that session, and is forwarded" "existing forward" "$(tf 'p["session"]' 1) $(tf 'p["verdict"]' 1)"
live_state >"$IT_TMP/live2"
sluice_fw show sessions --json | "$IT_PY" -c 'import json,sys; print(sum(1 for s in json.load(sys.stdin)["sessions"] if s.get("source_port") == 44000))' >"$IT_TMP/pcap-sessions"
it_expect_eq "the traced flow left no live session" 0 "$(cat "$IT_TMP/pcap-sessions")"

# Misuse.
sluice_fw trace --in nosuch0 --src "$LAN4" --dst "$WAN4" >"$IT_TMP/e1" 2>&1
it_expect_eq "an unknown interface is refused (exit 1)" 1 $?
it_check "... naming it" grep -q "nosuch0: no such interface" "$IT_TMP/e1"
sluice_fw trace --in lan0 --src "$LAN4" --dst "$WAN6" >"$IT_TMP/e2" 2>&1
it_check "mixed families are refused" grep -q "is not an IPv4 address like --src" "$IT_TMP/e2"
sluice_fw trace --in lan0 >"$IT_TMP/e3" 2>&1
it_check "no packet given: says what to give" grep -q "give the packet" "$IT_TMP/e3"
sluice_fw trace --in lan0 --src "$LAN4" --dst "$WAN4" --protocol icmp --sport 5 --dport 6 >"$IT_TMP/e4" 2>&1
it_expect_eq "ports on an ICMP packet are refused (exit 1), not ignored" 1 $?
it_check "... naming them" grep -q -- "--sport, --dport: not part of a --protocol icmp packet" "$IT_TMP/e4"
sluice_fw trace --in lan0 --pcap "$IT_TMP/conv.pcap" --dport 80 >"$IT_TMP/e5" 2>&1
it_check "packet fields with --pcap are refused" grep -q -- "--dport: --pcap traces the file's packets as they are" "$IT_TMP/e5"

it_finish
