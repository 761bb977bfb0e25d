#!/usr/bin/env bash
# Hairpin: a LAN host reaches a service published on the firewall's WAN
# address (198.18.100.1:8080 → 198.18.1.20:80, a server on the same LAN)
# through that public address. Source NAT to the LAN interface's address
# makes the server answer through the firewall.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init nat_hairpin hp
it_need_root_and_bpf
it_topology_up
lan ip addr add 198.18.1.20/24 dev eth0
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  source:
    - { name: hairpin, from: trust, to: trust, translate: interface }
  destination:
    - { name: web-lan, from: trust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.20, port: 80 } }
    - { name: web-wan, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.20, port: 80 } }
NAT
it_sluice_start "$IT_TMP/fw.yaml"

it_server lan peer-server 198.18.1.20 80
for i in 1 2; do
    it_expect_eq "attempt $i: LAN -> 198.18.100.1:8080 reaches 198.18.1.20:80, which sees the firewall's LAN address" \
        "198.18.1.1" "$(chat lan ask --host 198.18.100.1 --port 8080 | awk '{print $1}')"
done
it_expect_eq "WAN -> 198.18.100.1:8080 reaches the same server, which sees the WAN host" \
    "$WAN4" "$(ask_addr wan 198.18.100.1 8080)"
it_finish
