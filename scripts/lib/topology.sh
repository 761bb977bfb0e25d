#!/usr/bin/env bash
# A LAN host / firewall / WAN host topology in network namespaces, addressed
# only from the benchmarking ranges (198.18.0.0/15, 2001:2::/48):
#
#   <P>-lan  eth0 198.18.1.10   2001:2:0:1::10    ── lan0 <P>-fw wan0 ──  eth0 198.18.100.200  2001:2:0:100::200  <P>-wan
#                                                    198.18.1.1          198.18.100.1
#                                                    2001:2:0:1::1       2001:2:0:100::1
#
# Source this file, then: topology_up PREFIX; ...; topology_down PREFIX.
# Every namespace name starts with PREFIX, so two topologies coexist.

topology_up() {
    local p=$1 n
    topology_down "$p" 2>/dev/null || true
    for n in lan fw wan; do
        ip netns add "$p-$n" || return 1
        ip -n "$p-$n" link set lo up
    done
    ip link add "$p-l" type veth peer name "$p-lp" || return 1
    ip link set "$p-l" netns "$p-lan" name eth0
    ip link set "$p-lp" netns "$p-fw" name lan0
    ip link add "$p-w" type veth peer name "$p-wp" || return 1
    ip link set "$p-w" netns "$p-wan" name eth0
    ip link set "$p-wp" netns "$p-fw" name wan0
    ip -n "$p-lan" addr add 198.18.1.10/24 dev eth0
    ip -n "$p-lan" addr add 2001:2:0:1::10/64 dev eth0 nodad
    ip -n "$p-fw" addr add 198.18.1.1/24 dev lan0
    ip -n "$p-fw" addr add 2001:2:0:1::1/64 dev lan0 nodad
    ip -n "$p-fw" addr add 198.18.100.1/24 dev wan0
    ip -n "$p-fw" addr add 2001:2:0:100::1/64 dev wan0 nodad
    ip -n "$p-wan" addr add 198.18.100.200/24 dev eth0
    ip -n "$p-wan" addr add 2001:2:0:100::200/64 dev eth0 nodad
    ip -n "$p-lan" link set eth0 up
    ip -n "$p-wan" link set eth0 up
    ip -n "$p-fw" link set lan0 up
    ip -n "$p-fw" link set wan0 up
    ip -n "$p-lan" route add default via 198.18.1.1
    ip -n "$p-lan" -6 route add default via 2001:2:0:1::1
    ip -n "$p-wan" route add 198.18.1.0/24 via 198.18.100.1
    ip -n "$p-wan" -6 route add 2001:2:0:1::/64 via 2001:2:0:100::1
    ip netns exec "$p-fw" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

topology_down() {
    local p=$1 n
    for n in lan fw wan; do
        ip netns del "$p-$n" 2>/dev/null
    done
    return 0
}
