#!/usr/bin/env bash
# Destination NAT (port forwarding) with real traffic: the WAN host connects to
# the firewall's WAN address, port 8080, and reaches the LAN server on port 80,
# IPv4 and IPv6; the server sees the real client; 4 MiB arrive intact.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init nat_port_forward pf
it_need_root_and_bpf
it_topology_up
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  destination:
    - { name: web-in, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.10, port: 80 } }
    - { name: web-in6, from: untrust, destination: "2001:2:0:100::1", protocol: tcp, port: 8080,
        translate-to: { address: "2001:2:0:1::10", port: 80 } }
NAT
it_sluice_start "$IT_TMP/fw.yaml"

BYTES=$((4 * 1024 * 1024))
for fam in 4 6; do
    if [ $fam = 4 ]; then pub=198.18.100.1 inside=$LAN4 client=$WAN4; else pub=2001:2:0:100::1 inside=$LAN6 client=$WAN6; fi
    it_server lan peer-server "$inside" 80
    peer_pid=$IT_LAST_PID
    it_expect_eq "IPv$fam: WAN -> [$pub]:8080 reaches the LAN server, which sees the WAN host" \
        "$client" "$(ask_addr wan "$pub" 8080)"
    it_stop "$peer_pid"; it_forget_pid "$peer_pid"
    result="$IT_TMP/sink$fam.result"
    it_server lan sink "$inside" 80 --result "$result"
    sink_pid=$IT_LAST_PID
    sent=$(chat wan source --host "$pub" --port 8080 --bytes "$BYTES" --seed $fam 2>"$IT_TMP/source$fam.err")
    it_wait_for "sink result" 100 test -f "$result"
    it_expect_eq "IPv$fam: $BYTES bytes through the port forward arrive intact (count and sha256)" "$sent" "$(cat "$result" 2>/dev/null)"
    it_stop "$sink_pid"; it_forget_pid "$sink_pid"
    # A LAN server on 8082 that a forward would reach; unpublished, the
    # packet is for the firewall itself, whose WAN zone allows nothing
    # (host-inbound drops it: no answer at all).
    it_server lan accept-server "$inside" 8082
    it_expect_eq "IPv$fam: an unpublished port on the WAN address is not forwarded (host-inbound drops it)" \
        "timeout" "$(probe wan "$pub" 8082 2)"
done
it_finish
