#!/usr/bin/env bash
# Session GC: with short timeouts in the config, an idle flow's sessions are
# removed, while a TCP connection that keeps exchanging data outlives several
# of its timeouts and still works afterwards.
source "$(dirname "$0")/lib.sh"
it_init session_gc gc
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
cat >>"$IT_TMP/fw.yaml" <<'YAML'
timeouts: { tcp-established: 3s, icmp: 2s }
YAML
it_sluice_start "$IT_TMP/fw.yaml"

has_icmp_session() {  # has_icmp_session DST
    sluice_fw show sessions --json >"$IT_TMP/s.json" &&
        "$IT_PY" -c '
import ipaddress,json,sys
d=json.load(open(sys.argv[1])); dst=ipaddress.ip_address(sys.argv[2])
sys.exit(0 if any(s["protocol"] in ("icmp","icmpv6") and ipaddress.ip_address(s["destination"])==dst for s in d["sessions"]) else 1)' \
            "$IT_TMP/s.json" "$1"
}
no_icmp_session() { ! has_icmp_session "$1"; }

for dst in "$WAN4" "$WAN6"; do
    it_check "ping $dst creates an ICMP session" bash -c "ip netns exec $P-lan ping -q -c 1 -W 2 $dst >/dev/null"
    it_check "the session is listed" has_icmp_session "$dst"
    it_check "the idle ICMP session to $dst expires (icmp timeout 2s)" \
        it_wait_for "ICMP session to $dst gone" 100 no_icmp_session "$dst"
done

it_server wan echo-server "$WAN4" 8080
chat_open keep "$WAN4" 8080 || it_fail "chat connection opened"
port=${CHAT_PORT_keep:-0}
for round in 1 2 3 4 5 6 7 8; do
    chat_exchange keep 1 64 || it_fail "exchange $round on the kept-alive connection"
    sleep 1
done
sluice_fw show sessions --json >"$IT_TMP/s.json"
state=$(session_field "$IT_TMP/s.json" tcp "$LAN4" "$port" "$WAN4" 8080 state)
it_expect_eq "a TCP flow active for 8s outlives its 3s timeout" established "$state"
it_check "and still carries data" chat_exchange keep 5 1000
it_finish
