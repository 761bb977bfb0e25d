#!/usr/bin/env bash
# Drop capture (`sluice capture`, docs/operations.md "Drop capture"):
#   - `--reason drop-policy-deny --count 5` writes exactly the first 5 denied
#     datagrams to a pcap that `tcpdump -r` reads back (their tuple and
#     length), each record carrying its reason and the interface it came in
#     on (NFLOG prefix and ifindex, read here without libpcap);
#   - without --reason every drop is captured, each under its own reason
#     (policy deny, filter), IPv4 and IPv6; a pass reason can be asked for;
#   - capture is off when the command ends (capture_cfg enabled 0), and when
#     it is killed the daemon turns it off; a second capture while one runs,
#     an unknown reason (a misspelt one with the name meant) and a bad
#     --snaplen are refused.
source "$(dirname "$0")/lib.sh"
it_init capture cp
it_need_root_and_bpf
command -v tcpdump >/dev/null || it_skip "tcpdump is not installed (scripts/setup.sh installs it)"
it_topology_up

cat >"$IT_TMP/fw.yaml" <<EOF
interfaces:
  lan0: { zone: trust, filter: lan-in }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
applications:
  closed-udp: { protocol: udp, destination-port: 6000 }
  open-udp: { protocol: udp, destination-port: 5000 }
policies:
  - { name: lan-deny, from: trust, to: untrust, application: [closed-udp], action: deny }
  - { name: lan-out, from: trust, to: untrust, application: [open-udp], action: permit }
default-action: deny
filters:
  lan-in:
    - { name: no-9999, protocol: udp, destination-port: 9999, action: drop }
EOF
it_sluice_start "$IT_TMP/fw.yaml"
PINS="/sys/fs/bpf/sluice/netns/$P-fw/default"
LAN_IFINDEX=$(ip -n "$P-fw" -j link show lan0 | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["ifindex"])')

udp_send() {   # udp_send ADDR PORT COUNT SIZE
    ip netns exec "$P-lan" "$IT_PY" -c '
import socket, sys
host, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(count):
    s.sendto(b"x" * size, (host, port))
' "$@"
}
capture_enabled() {   # capture_cfg's enabled word (bpftool shows it by field name, from the map's BTF)
    bpftool -j map dump pinned "$PINS/capture_cfg" |
        "$IT_PY" -c 'import json,sys; e=json.load(sys.stdin)[0]; print(e.get("formatted", e)["value"]["enabled"])'
}
# start_capture NAME ARGS...: `sluice capture ARGS` in the background, once it says it captures.
start_capture() {
    local name=$1
    shift
    it_bg "$name" "$SLUICE" --netns "$P-fw" capture "$@"
    CAPTURE_PID=$IT_LAST_PID
    it_wait_for "capture $name started" 50 grep -q "capturing" "$IT_TMP/$name.log" ||
        { cat "$IT_TMP/$name.log"; it_fail "capture $name did not start"; }
}
finish_capture() {   # finish_capture PID: wait for it (it stops itself), bounded
    local i
    for i in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    it_stop "$1"
    it_forget_pid "$1"
}

it_expect_eq "capture is off before anything asks" 0 "$(capture_enabled)"

# 1. Five of seven denied datagrams, by reason.
start_capture deny --reason drop-policy-deny --count 5 -w "$IT_TMP/deny.pcap"
it_expect_eq "capture is on while it runs" 1 "$(capture_enabled)"
it_check "a second capture is refused while one runs" sh -c \
    "! '$SLUICE' --netns '$P-fw' capture -w '$IT_TMP/other.pcap' --count 1 2>'$IT_TMP/second.err' && grep -q 'a capture is running already' '$IT_TMP/second.err'"
udp_send "$WAN4" 5000 3 100   # permitted: not captured
udp_send "$WAN4" 6000 7 100   # denied: the first 5 are
finish_capture "$CAPTURE_PID"
it_check "the capture reported 5 packets" grep -q "captured 5 packets to $IT_TMP/deny.pcap" "$IT_TMP/deny.log"
it_expect_eq "capture is off after it ended" 0 "$(capture_enabled)"
tcpdump -nn -r "$IT_TMP/deny.pcap" >"$IT_TMP/deny.txt" 2>"$IT_TMP/deny.tcpdump.err"
it_expect_eq "tcpdump -r reads 5 packets" 5 "$(grep -c . "$IT_TMP/deny.txt")"
it_expect_eq "each is the denied datagram: 198.18.1.10 -> 198.18.100.200.6000, UDP length 100" 5 \
    "$(grep -c "IP 198.18.1.10\.[0-9]* > 198.18.100.200\.6000: UDP, length 100" "$IT_TMP/deny.txt")"
"$IT_PY" "$IT_DIR/pcap_nflog.py" "$IT_TMP/deny.pcap" >"$IT_TMP/deny.records"
it_expect_eq "each record carries its reason, the LAN interface, the IPv4 packet (128 bytes)" 5 \
    "$(grep -c "^drop-policy-deny $LAN_IFINDEX ipv4 128$" "$IT_TMP/deny.records")"

# 2. Every drop, each under its reason, both families.
start_capture all --duration 3 -w "$IT_TMP/all.pcap" --json
udp_send "$WAN4" 6000 2 100
udp_send "$WAN6" 6000 2 100
udp_send "$WAN4" 9999 3 100
udp_send "$WAN4" 6002 1 100
finish_capture "$CAPTURE_PID"
"$IT_PY" "$IT_DIR/pcap_nflog.py" "$IT_TMP/all.pcap" >"$IT_TMP/all.records"
it_expect_eq "every drop: 2 IPv4 + 2 IPv6 policy denies" "2 2" \
    "$(grep -c '^drop-policy-deny .* ipv4 ' "$IT_TMP/all.records") $(grep -c '^drop-policy-deny .* ipv6 148$' "$IT_TMP/all.records")"
it_expect_eq "... 3 filter drops, 1 default deny" "3 1" \
    "$(grep -c '^drop-filter ' "$IT_TMP/all.records") $(grep -c '^drop-policy-default ' "$IT_TMP/all.records")"
it_expect_eq "tcpdump reads the 8 of them" 8 "$(tcpdump -nn -r "$IT_TMP/all.pcap" 2>/dev/null | grep -c .)"
it_expect_eq "the JSON summary counts them by reason" "2 3" \
    "$("$IT_PY" -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()[open(sys.argv[1]).read().index("{"):]); print(d["by_reason"]["drop-policy-default"] + 1, d["by_reason"]["drop-filter"])' "$IT_TMP/all.log")"

# 3. A killed capture is turned off by the daemon.
start_capture killed -w "$IT_TMP/killed.pcap"
kill -KILL "$CAPTURE_PID"
wait "$CAPTURE_PID" 2>/dev/null
it_forget_pid "$CAPTURE_PID"
capture_off() { [ "$(capture_enabled)" = 0 ]; }
it_wait_for "capture turned off" 50 capture_off
it_expect_eq "the daemon turned the dead capture off" 0 "$(capture_enabled)"
it_check "and said so" grep -q "capture: pid $CAPTURE_PID is gone" "$SLUICE_LOG"

# 4. Refusals.
"$SLUICE" --netns "$P-fw" capture --reason drop-nonsense -w "$IT_TMP/x.pcap" >"$IT_TMP/unknown.out" 2>&1
it_expect_eq "an unknown reason is refused (exit 1)" 1 "$?"
it_check "... saying where the names are" grep -q "not a drop or pass reason.*; .sluice show stats. lists them" "$IT_TMP/unknown.out"
"$SLUICE" --netns "$P-fw" capture --reason drop-policy-denny -w "$IT_TMP/x.pcap" >"$IT_TMP/typo.out" 2>&1
it_expect_eq "a misspelt reason is refused (exit 1)" 1 "$?"
it_check "... suggesting the reason meant" grep -q 'did you mean "drop-policy-deny"' "$IT_TMP/typo.out"
it_check "an info counter is not a reason" sh -c \
    "'$SLUICE' --netns '$P-fw' capture --reason forward -w '$IT_TMP/x.pcap' 2>&1 | grep -q 'not a drop or pass reason'"
it_check "a bad --snaplen is refused" sh -c \
    "'$SLUICE' --netns '$P-fw' capture --snaplen 10 -w '$IT_TMP/x.pcap' 2>&1 | grep -q 'snaplen must be'"

it_finish
