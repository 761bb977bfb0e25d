#!/usr/bin/env bash
# A new connection from the WAN side to the LAN host is blocked (policy
# nothing-in: untrust -> trust deny), IPv4 and IPv6, TCP and ping, while the
# LAN host can still reach the WAN host.
source "$(dirname "$0")/lib.sh"
it_init wan_inbound wi
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"

it_server lan accept-server "$LAN4" 8080
it_server lan accept-server "$LAN6" 8080
it_log "checking: without sluice the kernel forwards WAN -> LAN (so a block below is sluice's doing)"
it_expect_eq "IPv4 WAN -> LAN tcp/8080 connects before sluice runs" connected "$(probe wan "$LAN4" 8080)"
it_expect_eq "IPv6 WAN -> LAN tcp/8080 connects before sluice runs" connected "$(probe wan "$LAN6" 8080)"

it_sluice_start "$IT_TMP/fw.yaml"
it_log "checking: with sluice, new flows WAN -> LAN are dropped"
# Independent checks, side by side (lib.sh it_par_*): the timeouts are waited for once.
ping_unanswered() { ! wan ping -q -c 2 -i 0.5 -W 1 "$@" >/dev/null 2>&1; }
it_par_eq "IPv4 WAN -> LAN tcp/8080 times out" timeout probe wan "$LAN4" 8080 3
it_par_eq "IPv6 WAN -> LAN tcp/8080 times out" timeout probe wan "$LAN6" 8080 3
it_par_check "IPv4 WAN -> LAN ping gets no answer" ping_unanswered "$LAN4"
it_par_check "IPv6 WAN -> LAN ping gets no answer" ping_unanswered -6 "$LAN6"
it_par_wait
it_log "checking: LAN -> WAN still works (the block is directional)"
it_check "IPv4 LAN -> WAN ping answered" ping_ok lan "$WAN4"
it_check "IPv6 LAN -> WAN ping answered" ping_ok lan "$WAN6"
it_finish
