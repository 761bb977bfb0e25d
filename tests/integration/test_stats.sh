#!/usr/bin/env bash
# `sluice show stats --json` counts what the test causes: policy deny, default
# deny, reject (RST and ICMP sent), WAN -> LAN deny, sessions created. IPv4 and
# IPv6 traffic alike; every counter must grow by at least the number of
# attempts made (TCP retransmits may add more).
source "$(dirname "$0")/lib.sh"
it_init stats st
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
it_sluice_start "$IT_TMP/fw.yaml"
for dst in "$WAN4" "$WAN6"; do
    for port in 8080 7000 7001 7002; do it_server wan accept-server "$dst" $port; done
done
it_server lan accept-server "$LAN4" 8080
it_server lan accept-server "$LAN6" 8080

sluice_fw show stats --json >"$IT_TMP/before.json"
it_check "show stats --json prints JSON with counters" "$IT_PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["counters"]' "$IT_TMP/before.json"

it_log "causing: 2 permitted connects, 2 denied, 2 default-denied, 2 rejected (TCP), 2 rejected (UDP), 2 WAN -> LAN"
for dst in "$WAN4" "$WAN6"; do
    probe lan "$dst" 8080 >/dev/null
    probe lan "$dst" 7000 2 >/dev/null
    probe lan "$dst" 7002 2 >/dev/null
    probe lan "$dst" 7001 2 >/dev/null
    udp_probe lan "$dst" 7001 2 >/dev/null
done
probe wan "$LAN4" 8080 2 >/dev/null
probe wan "$LAN6" 8080 2 >/dev/null
sluice_fw show stats --json >"$IT_TMP/after.json"

grew() {  # grew COUNTER MINIMUM WHY
    local a b
    a=$(stat_value "$IT_TMP/before.json" "$1")
    b=$(stat_value "$IT_TMP/after.json" "$1")
    if [ "$a" = missing ] || [ "$b" = missing ]; then it_fail "counter $1 exists"; return; fi
    it_expect_ge "$1 grew by at least $2 ($3): $a -> $b, delta" $((b - a)) "$2"
}
grew drop-policy-deny 4 "tcp/7000 v4+v6 and WAN -> LAN v4+v6"
grew drop-policy-default 2 "tcp/7002 v4+v6"
grew drop-policy-reject 4 "tcp+udp/7001 v4+v6"
grew reject-tcp-rst-sent 2 "tcp/7001 v4+v6"
grew reject-icmp-sent 2 "udp/7001 v4+v6"
grew session-created 2 "tcp/8080 v4+v6"
grew rx 20 "every packet above"
it_finish
