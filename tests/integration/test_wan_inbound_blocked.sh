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
it_expect_eq "IPv4 WAN -> LAN tcp/8080 times out" timeout "$(probe wan "$LAN4" 8080 3)"
it_expect_eq "IPv6 WAN -> LAN tcp/8080 times out" timeout "$(probe wan "$LAN6" 8080 3)"
if wan ping -q -c 2 -i 0.5 -W 1 "$LAN4" >/dev/null 2>&1; then
    it_fail "IPv4 WAN -> LAN ping gets no answer" "ping was answered"
else
    it_pass "IPv4 WAN -> LAN ping gets no answer"
fi
if wan ping -6 -q -c 2 -i 0.5 -W 1 "$LAN6" >/dev/null 2>&1; then
    it_fail "IPv6 WAN -> LAN ping gets no answer" "ping was answered"
else
    it_pass "IPv6 WAN -> LAN ping gets no answer"
fi
it_log "checking: LAN -> WAN still works (the block is directional)"
it_check "IPv4 LAN -> WAN ping answered" ping_ok lan "$WAN4"
it_check "IPv6 LAN -> WAN ping answered" ping_ok lan "$WAN6"
it_finish
