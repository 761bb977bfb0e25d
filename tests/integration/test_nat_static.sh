#!/usr/bin/env bash
# Static 1:1 NAT both ways with real traffic: the LAN host 198.18.1.10 /
# 2001:2:0:1::10 is 198.18.200.10 / 2001:2:0:200::10 outside. WAN → outside
# address reaches the LAN host; LAN → WAN leaves with the outside address.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init nat_static st
it_need_root_and_bpf
it_topology_up
wan ip route add 198.18.200.0/24 via 198.18.100.1
wan ip -6 route add 2001:2:0:200::/64 via 2001:2:0:100::1
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  static:
    - { inside: 198.18.1.10, outside: 198.18.200.10 }
    - { inside: "2001:2:0:1::10", outside: "2001:2:0:200::10" }
NAT
it_sluice_start "$IT_TMP/fw.yaml"

for fam in 4 6; do
    if [ $fam = 4 ]; then outside=198.18.200.10 inside=$LAN4 wan=$WAN4; else outside=2001:2:0:200::10 inside=$LAN6 wan=$WAN6; fi
    it_server lan peer-server "$inside" 80
    it_expect_eq "IPv$fam inbound: WAN -> $outside:80 reaches the LAN host, which sees the WAN host" \
        "$wan" "$(ask_addr wan "$outside" 80)"
    it_server wan peer-server "$wan" 8080
    it_expect_eq "IPv$fam outbound: the WAN host sees the LAN host as $outside" \
        "$outside" "$(ask_addr lan "$wan" 8080)"
done
it_finish
