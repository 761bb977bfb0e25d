#!/usr/bin/env bash
# Host-inbound with real traffic (docs/host-protection.md): with
# `host-inbound: [ping, ssh]` on trust only, the LAN host pings the firewall
# and reaches TCP 22 on both of its addresses and nothing else; the WAN host
# reaches nothing (TCP, UDP, ICMP echo) on either address; the firewall's own
# TCP, UDP (a DNS-like question) and ping get their replies; ARP and neighbour
# discovery keep working; `show host-inbound` counts what was sent.
source "$(dirname "$0")/lib.sh"
it_init host_inbound hi
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
sed -i 's/^  trust: {}$/  trust: { host-inbound: [ping, ssh] }/' "$IT_TMP/fw.yaml"
grep -q 'host-inbound: \[ping, ssh\]' "$IT_TMP/fw.yaml" || it_fail "config has host-inbound on trust"

FW_LAN4=198.18.1.1
FW_LAN6=2001:2:0:1::1
FW_WAN4=198.18.100.1
FW_WAN6=2001:2:0:100::1
FW_ADDRS=("$FW_LAN4" "$FW_LAN6" "$FW_WAN4" "$FW_WAN6")

# Services on the firewall itself: TCP 22 (allowed from trust), TCP 2222 and
# UDP 5353 (allowed nowhere). "::" listens for IPv4 and IPv6 alike.
it_server fw accept-server :: 22
it_server fw accept-server :: 2222
it_bg fw-udp ip netns exec "$P-fw" "$IT_PY" "$IT_CHAT" peer-server --bind :: --port 5353 --ready "$IT_TMP/udp.ready" --udp
it_wait_for "UDP server on the firewall" 50 test -f "$IT_TMP/udp.ready"
# Servers on the WAN host for the firewall's own flows.
it_server wan accept-server "$WAN4" 8080
it_server wan accept-server "$WAN6" 8080
it_bg wan-dns4 ip netns exec "$P-wan" "$IT_PY" "$IT_CHAT" peer-server --bind "$WAN4" --port 53 --ready "$IT_TMP/dns4.ready" --udp
it_bg wan-dns6 ip netns exec "$P-wan" "$IT_PY" "$IT_CHAT" peer-server --bind "$WAN6" --port 53 --ready "$IT_TMP/dns6.ready" --udp
it_wait_for "DNS-like servers on the WAN host" 50 test -f "$IT_TMP/dns4.ready" -a -f "$IT_TMP/dns6.ready"

it_log "checking: without sluice the WAN host reaches the firewall (so a block below is sluice's doing)"
it_expect_eq "IPv4 WAN -> firewall tcp/22 before sluice" connected "$(probe wan "$FW_WAN4" 22)"
it_expect_eq "IPv6 WAN -> firewall tcp/22 before sluice" connected "$(probe wan "$FW_WAN6" 22)"
it_check "IPv4 WAN -> firewall ping before sluice" ping_ok wan "$FW_WAN4"

it_sluice_start "$IT_TMP/fw.yaml"

# The probes and pings of each of the next two blocks are independent of each
# other (no screens, no counters read until after them): they run side by
# side (lib.sh it_par_*), so the expected timeouts are waited for once.
it_log "checking: trust reaches ping and ssh on every address of the firewall, nothing else"
for a in "${FW_ADDRS[@]}"; do
    it_par_eq "LAN -> $a tcp/22" connected probe lan "$a" 22
    it_par_eq "LAN -> $a tcp/2222 (not allowed)" timeout probe lan "$a" 2222 2
    it_par_check "LAN -> $a ping" ping_ok lan "$a"
done
it_par_eq "LAN -> $FW_LAN4 udp/5353 (not allowed)" timeout udp_probe lan "$FW_LAN4" 5353 2
it_par_eq "LAN -> $FW_WAN6 udp/5353 (not allowed)" timeout udp_probe lan "$FW_WAN6" 5353 2
it_par_wait

it_log "checking: untrust reaches nothing, on either address"
ping_unanswered() { ! ip netns exec "$P-wan" ping -q -c 2 -i 0.3 -W 1 "$1" >/dev/null 2>&1; }
for a in "${FW_ADDRS[@]}"; do
    it_par_eq "WAN -> $a tcp/22" timeout probe wan "$a" 22 2
    it_par_eq "WAN -> $a tcp/2222" timeout probe wan "$a" 2222 2
    it_par_eq "WAN -> $a udp/5353" timeout udp_probe wan "$a" 5353 2
    it_par_check "WAN -> $a ping gets no answer" ping_unanswered "$a"
done
it_par_wait

it_log "checking: the firewall's own flows get their replies"
it_expect_eq "firewall -> WAN tcp/8080 (IPv4)" connected "$(probe fw "$WAN4" 8080)"
it_expect_eq "firewall -> WAN tcp/8080 (IPv6)" connected "$(probe fw "$WAN6" 8080)"
answer4=$(chat fw ask --host "$WAN4" --port 53 --udp --timeout 3 | awk '{print $1}')
answer6=$(chat fw ask --host "$WAN6" --port 53 --udp --timeout 3 | awk '{print $1}')
it_expect_eq "firewall -> WAN udp/53 answered (IPv4; the server saw)" "$FW_WAN4" "$answer4"
it_expect_eq "firewall -> WAN udp/53 answered (IPv6; the server saw)" "$FW_WAN6" "$answer6"
it_check "firewall -> WAN ping (IPv4)" ping_ok fw "$WAN4"
it_check "firewall -> WAN ping (IPv6)" ping_ok fw "$WAN6"
it_check "firewall -> LAN ping (IPv4)" ping_ok fw "$LAN4"

it_log "checking: ARP and neighbour discovery still work (caches flushed, then traffic through)"
for ns in lan fw wan; do ip -n "$P-$ns" neigh flush all >/dev/null 2>&1; done
it_check "LAN -> WAN ping after ARP flush (IPv4)" ping_ok lan "$WAN4"
it_check "LAN -> WAN ping after ND flush (IPv6)" ping_ok lan "$WAN6"
it_check "LAN -> firewall ping after flush (IPv6)" ping_ok lan "$FW_LAN6"

it_log "checking: counters match the packets sent"
hi_counter() { # ZONE SERVICE accepted|dropped
    sluice_fw show host-inbound --json | "$IT_PY" -c '
import json, sys
zone, service, field = sys.argv[1:4]
for z in json.load(sys.stdin)["zones"]:
    if z["zone"] == zone:
        for s in z["services"]:
            if s["service"] == service:
                print(s[field]); sys.exit(0)
print(0)' "$1" "$2" "$3"
}
before_acc=$(hi_counter trust ping accepted)
before_drop=$(hi_counter untrust ping dropped)
before_other=$(hi_counter untrust other dropped)
lan ping -q -c 5 -i 0.2 -W 1 "$FW_LAN4" >/dev/null 2>&1
wan ping -q -c 4 -i 0.2 -W 1 "$FW_WAN4" >/dev/null 2>&1
udp_probe wan "$FW_WAN4" 5353 1 >/dev/null
it_expect_eq "trust ping accepted +5" $((before_acc + 5)) "$(hi_counter trust ping accepted)"
it_expect_eq "untrust ping dropped +4" $((before_drop + 4)) "$(hi_counter untrust ping dropped)"
it_expect_eq "untrust other (udp/5353) dropped +1" $((before_other + 1)) "$(hi_counter untrust other dropped)"
sluice_fw show host-inbound --json >"$IT_TMP/hi.json"
sluice_fw show stats --json >"$IT_TMP/stats.json"
total_dropped=$("$IT_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["dropped"])' "$IT_TMP/hi.json")
it_expect_eq "drop-host-inbound equals the per-service drops" "$total_dropped" \
    "$(stat_value "$IT_TMP/stats.json" drop-host-inbound)"
it_expect_ge "host-flow-tracked counted the firewall's own flows" "$(stat_value "$IT_TMP/stats.json" host-flow-tracked)" 5
it_log "checking: a UDP service removed by a reload stops answering, also a client that kept its port"
udp_from_40000() { echo q | lan timeout 3 socat -T2 - "UDP:$FW_LAN4:5353,sourceport=40000" 2>/dev/null | awk '{print $1}'; }
sed -i 's/^  trust: { host-inbound: \[ping, ssh\] }$/  trust: { host-inbound: [ping, ssh, { protocol: udp, port: 5353 }] }/' "$IT_TMP/fw.yaml"
it_check "reload with udp/5353 allowed on trust" sluice_fw reload
it_expect_eq "LAN -> firewall udp/5353 from port 40000, allowed (the server listens on ::)" "::ffff:$LAN4" "$(udp_from_40000)"
it_expect_eq "... and again" "::ffff:$LAN4" "$(udp_from_40000)"
sed -i 's/, { protocol: udp, port: 5353 }\]/]/' "$IT_TMP/fw.yaml"
it_check "reload without it" sluice_fw reload
it_expect_eq "LAN -> firewall udp/5353 from port 40000 after the reload (no answer)" "" "$(udp_from_40000)"
sluice_fw show host-inbound
it_finish
