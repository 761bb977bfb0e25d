#!/usr/bin/env bash
# Source NAT to the WAN interface's address with real traffic: the WAN host
# sees the firewall's WAN address as the source of LAN traffic (TCP, UDP,
# IPv4 and NAT66), ping works, ICMP errors come back through the translation
# (UDP to a closed port is refused at the LAN host; tracepath reaches the WAN
# host), and `sluice show nat --json` lists the translations.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init nat_source ns
it_need_root_and_bpf
it_topology_up
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, source: [lan-net], translate: interface }
NAT
it_sluice_start "$IT_TMP/fw.yaml"

FW_WAN4=198.18.100.1
FW_WAN6=2001:2:0:100::1
for fam in 4 6; do
    if [ $fam = 4 ]; then dst=$WAN4 want=$FW_WAN4 ping_cmd="ping -4"; else dst=$WAN6 want=$FW_WAN6 ping_cmd="ping -6"; fi
    it_server wan peer-server "$dst" 8080
    it_server wan peer-server "$dst" 9000 --udp
    it_expect_eq "IPv$fam TCP: the WAN host sees the firewall's WAN address" "$want" "$(ask_addr lan "$dst" 8080)"
    it_expect_eq "IPv$fam UDP: the WAN host sees the firewall's WAN address" "$want" "$(ask_addr lan "$dst" 9000 --udp)"
    it_check "IPv$fam ping through source NAT is answered" lan $ping_cmd -c 2 -W 2 "$dst"
    it_expect_eq "IPv$fam UDP to a closed port: the ICMP port-unreachable comes back through NAT" \
        "icmp ECONNREFUSED" "$(udp_probe lan "$dst" 9009)"
    trace=$(lan tracepath -n -m 5 "$dst" 2>&1)
    it_log "tracepath IPv$fam:"; echo "$trace" | sed 's/^/    /'
    it_check "IPv$fam tracepath through source NAT reaches the WAN host" grep -q "$dst.*reached" <<<"$trace"
done

it_expect_ge "nat-translated counts translated packets" "$(stat_value nat-translated)" 10
it_expect_ge "nat-icmp-error-translated counts the errors sent back" "$(stat_value nat-icmp-error-translated)" 2
it_expect_ge "nat-port-allocated counts the flows' ports" "$(stat_value nat-port-allocated)" 4

# A long-lived flow so `show nat` has a translation to list.
it_server wan echo-server "$WAN4" 8081
chat_open keep "$WAN4" 8081
sluice_fw show nat --json >"$IT_TMP/nat.json" 2>"$IT_TMP/nat.err"
it_check "show nat --json lists the open TCP flow translated to the WAN address" "$IT_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
port = sys.argv[2]
hits = [t for t in d["translations"] if port in json.dumps(t) and sys.argv[3] in json.dumps(t)]
assert hits, d["translations"]' "$IT_TMP/nat.json" "$CHAT_PORT_keep" "$FW_WAN4"
it_finish
