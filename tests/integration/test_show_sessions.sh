#!/usr/bin/env bash
# While a TCP connection is open, `sluice show sessions --json` lists it: the
# right addresses, ports, protocol, zones, policy, state established, and
# packet counters in both directions. IPv4 and IPv6.
source "$(dirname "$0")/lib.sh"
it_init show_sessions ss
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
it_sluice_start "$IT_TMP/fw.yaml"

it_server wan echo-server "$WAN4" 8082
it_server wan echo-server "$WAN6" 8082
chat_open v4 "$WAN4" 8082 || { it_fail "IPv4 chat connection opened"; it_finish; }
chat_open v6 "$WAN6" 8082 || { it_fail "IPv6 chat connection opened"; it_finish; }
it_check "IPv4 connection exchanges 20 echoed messages" chat_exchange v4 20 1000
it_check "IPv6 connection exchanges 20 echoed messages" chat_exchange v6 20 1000

sluice_fw show sessions --json >"$IT_TMP/sessions.json" 2>"$IT_TMP/show.err"
it_check "show sessions --json exits 0 and prints JSON" "$IT_PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$IT_TMP/sessions.json"
for fam in 4 6; do
    if [ $fam = 4 ]; then src=$LAN4 dst=$WAN4 sport=$CHAT_PORT_v4 family=ipv4
    else src=$LAN6 dst=$WAN6 sport=$CHAT_PORT_v6 family=ipv6; fi
    it_log "checking: IPv$fam session tcp [$src]:$sport -> [$dst]:8082"
    got=$(session_field "$IT_TMP/sessions.json" tcp "$src" "$sport" "$dst" 8082 family state policy from_zone to_zone)
    it_expect_eq "IPv$fam flow listed once with family, state, policy and zones" "$family established lan-out trust untrust" "$got"
    read -r pf pr bf br <<<"$(session_field "$IT_TMP/sessions.json" tcp "$src" "$sport" "$dst" 8082 packets_forward packets_reply bytes_forward bytes_reply)"
    it_expect_ge "IPv$fam forward packets (20 messages sent)" "${pf:-}" 20
    it_expect_ge "IPv$fam reply packets (20 echoes)" "${pr:-}" 20
    it_expect_ge "IPv$fam forward bytes (20000 payload bytes)" "${bf:-}" 20000
    it_expect_ge "IPv$fam reply bytes (20000 payload bytes)" "${br:-}" 20000
    # The reply direction is folded into the initiator's entry, not listed apart.
    rev=$(session_field "$IT_TMP/sessions.json" tcp "$dst" 8082 "$src" "$sport" state)
    it_expect_eq "IPv$fam reply direction not listed as a separate session" "" "$rev"
done
it_log "checking: the text form lists the flows too"
sluice_fw show sessions >"$IT_TMP/sessions.txt"
it_check "text output mentions $WAN4:8082" grep -q "$WAN4:8082" "$IT_TMP/sessions.txt"
it_check "text output mentions [$WAN6]:8082" grep -qF "[$WAN6]:8082" "$IT_TMP/sessions.txt"
it_finish
