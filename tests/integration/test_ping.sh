#!/usr/bin/env bash
# Ping from the LAN host to the WAN host passes through sluice, IPv4 and IPv6.
source "$(dirname "$0")/lib.sh"
it_init ping pg
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
it_sluice_start "$IT_TMP/fw.yaml"

it_log "checking: ICMP echo LAN -> WAN is permitted (policy lan-out) and answered"
it_check "IPv4 ping $LAN4 -> $WAN4 answered" ping_ok lan "$WAN4"
it_check "IPv6 ping $LAN6 -> $WAN6 answered" ping_ok lan "$WAN6"

it_log "checking: the echo flows went through sluice's session table"
sluice_fw show sessions --json >"$IT_TMP/sessions.json"
n6=$("$IT_PY" -c '
import json,sys,ipaddress
d=json.load(open(sys.argv[1]))
print(sum(1 for s in d["sessions"] if s["protocol"]=="icmpv6" and ipaddress.ip_address(s["source"])==ipaddress.ip_address(sys.argv[2])))' \
    "$IT_TMP/sessions.json" "$LAN6")
n4=$("$IT_PY" -c '
import json,sys,ipaddress
d=json.load(open(sys.argv[1]))
print(sum(1 for s in d["sessions"] if s["protocol"]=="icmp" and ipaddress.ip_address(s["source"])==ipaddress.ip_address(sys.argv[2])))' \
    "$IT_TMP/sessions.json" "$LAN4")
it_expect_ge "IPv4 echo session(s) listed by show sessions" "$n4" 1
it_expect_ge "IPv6 echo session(s) listed by show sessions" "$n6" 1
it_finish
