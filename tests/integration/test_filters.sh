#!/usr/bin/env bash
# Stateless filters (config `filters:`): the filter of an interface sees every
# packet it receives, before conntrack and before the policy.
#   - a `drop` rule stops a port the policy permits; other ports still pass;
#   - rules match on destination address (IPv6 only here), protocol and port;
#   - `count` counts and goes on; every rule counts what it matched, exactly
#     (packets and bytes of UDP datagrams we send), in `show filters --json`;
#     drops are also counted in `show stats` (drop-filter);
#   - a rule added by `sluice reload` stops an established TCP connection at
#     once (the filter runs before the session lookup), and removing it lets
#     the same connection carry data again.
source "$(dirname "$0")/lib.sh"
it_init filters fl
it_need_root_and_bpf
it_topology_up

write_config() {   # write_config FILE [EXTRA_RULE]
    it_write_topology_config "$1"
    cat >>"$1" <<EOF
applications:
  web: { protocol: tcp, destination-port: 8080-8089 }
  ping: { protocol: icmp }
policies:
  - { name: lan-out, from: trust, to: untrust, application: [web, ping], action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
filters:
  lan-in:
    - { name: udp-seen, protocol: udp, action: count }
    - { name: no-udp-9999, protocol: udp, destination-port: 9999, action: drop }
    - { name: no-8081, protocol: tcp, destination-port: 8081, action: drop }
    - { name: no-v6-8082, destination: "2001:2:0:100::200", protocol: tcp, destination-port: 8082, action: drop }
$2
EOF
    # The LAN interface carries the filter.
    sed -i 's/^  lan0: { zone: trust }/  lan0: { zone: trust, filter: lan-in }/' "$1"
}

cfg="$IT_TMP/fw.yaml"
write_config "$cfg" ""
check_out=$("$SLUICE" check -c "$cfg" 2>&1)
it_check "sluice check accepts the filter config and names its rules" grep -q "1 filter (4 rules)" <<<"$check_out"
it_check "sluice check prints compile time and classifier memory" \
    grep -Eq "compiled in [0-9.]+ ms; classifier tables [0-9.]+ (KiB|MiB) per generation" <<<"$check_out"
it_sluice_start "$cfg"

for dst in "$WAN4" "$WAN6"; do
    for port in 8080 8081 8082; do it_server wan accept-server "$dst" $port; done
done
it_server wan echo-server "$WAN4" 8083

# filter_field JSON FILTER RULE FIELD
filter_field() {
    "$IT_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["filters"]:
    if f["name"] == sys.argv[2]:
        for r in f["rules"]:
            if r["name"] == sys.argv[3]:
                print(r[sys.argv[4]])
' "$@"
}

# udp_send NS ADDR PORT COUNT SIZE: COUNT datagrams of SIZE bytes, no answer expected.
udp_send() {
    ip netns exec "$P-$1" "$IT_PY" -c '
import socket, sys
host, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
for _ in range(count):
    s.sendto(b"x" * size, (host, port))
' "$2" "$3" "$4" "$5"
}

# Independent probes, side by side (lib.sh it_par_*): the timeouts are waited for once.
for fam in 4 6; do
    if [ $fam = 4 ]; then dst=$WAN4; else dst=$WAN6; fi
    it_par_eq "IPv$fam tcp/8080 (permitted, no filter rule) connects" connected probe lan "$dst" 8080
    it_par_eq "IPv$fam tcp/8081 (permitted by policy, dropped by the filter) times out" timeout \
        probe lan "$dst" 8081 2
done
it_par_eq "IPv4 tcp/8082 (the drop rule names an IPv6 destination) connects" connected probe lan "$WAN4" 8082
it_par_eq "IPv6 tcp/8082 (dropped by destination + port) times out" timeout probe lan "$WAN6" 8082 2
it_par_wait

sluice_fw show sessions --json >"$IT_TMP/sessions.json"
it_expect_eq "no session exists for the filtered tcp/8081" "" \
    "$(session_field "$IT_TMP/sessions.json" tcp "$LAN4" '*' "$WAN4" 8081 state)"

# Exact counts: 30 + 20 datagrams to udp/9999 (dropped), 10 to udp/9998 (counted,
# then the policy's default deny). Frame bytes: Ethernet 14 + IP + UDP 8 + 100.
sluice_fw show stats --json >"$IT_TMP/stats0.json"
udp_send lan "$WAN4" 9999 30 100
udp_send lan "$WAN6" 9999 20 100
udp_send lan "$WAN4" 9998 10 100
sleep 0.5
sluice_fw show filters --json >"$IT_TMP/filters.json"
sluice_fw show stats --json >"$IT_TMP/stats1.json"
it_expect_eq "no-udp-9999 counted 50 packets (30 IPv4 + 20 IPv6)" 50 \
    "$(filter_field "$IT_TMP/filters.json" lan-in no-udp-9999 packets)"
it_expect_eq "no-udp-9999 counted 30 x 142 + 20 x 162 bytes" $((30 * 142 + 20 * 162)) \
    "$(filter_field "$IT_TMP/filters.json" lan-in no-udp-9999 bytes)"
it_expect_eq "udp-seen (count, goes on) counted all 60 datagrams" 60 \
    "$(filter_field "$IT_TMP/filters.json" lan-in udp-seen packets)"
drops0=$(stat_value "$IT_TMP/stats0.json" drop-filter)
drops1=$(stat_value "$IT_TMP/stats1.json" drop-filter)
it_expect_eq "show stats drop-filter grew by the 50 dropped datagrams" 50 $((drops1 - drops0))
n8081=$(filter_field "$IT_TMP/filters.json" lan-in no-8081 packets)
it_expect_ge "no-8081 counted the SYNs of both probes (and their retransmissions)" "$n8081" 2
it_expect_eq "no-v6-8082 counted only IPv6 SYNs (no more than no-8081's)" 1 \
    "$([ "$(filter_field "$IT_TMP/filters.json" lan-in no-v6-8082 packets)" -ge 1 ] && echo 1 || echo 0)"
sluice_fw show filters >"$IT_TMP/filters.txt"
it_check "show filters (text) lists the filter with its interface" grep -q "filter lan-in (on lan0)" "$IT_TMP/filters.txt"

# Before conntrack: an established connection is stopped by a rule added later.
chat_open c "$WAN4" 8083 || it_fail "chat connection to tcp/8083" "did not connect"
it_check "the tcp/8083 connection carries data" chat_exchange c 5 1000
write_config "$cfg" "    - { name: no-8083, protocol: tcp, destination-port: 8083, action: drop }"
it_check "sluice reload adds rule no-8083" sluice_fw reload
fd_var="CHAT_FD_c"
echo "exchange 1 1000" >&"${!fd_var}"
sleep 3
it_expect_eq "the connection's exchange is still unanswered 3 s later" 0 \
    "$(grep -c '^done ' "$IT_TMP/chat-c.out" | awk '{print ($1 > 1)}')"
sluice_fw show filters --json >"$IT_TMP/filters2.json"
it_expect_ge "no-8083 counted the held segments" "$(filter_field "$IT_TMP/filters2.json" lan-in no-8083 packets)" 1
write_config "$cfg" ""
it_check "sluice reload removes rule no-8083" sluice_fw reload
done_twice() { [ "$(grep -c '^done ' "$IT_TMP/chat-c.out")" -ge 2 ]; }
it_check "the held exchange completes once the rule is gone (same connection)" \
    it_wait_for "the held exchange" 150 done_twice
it_finish
