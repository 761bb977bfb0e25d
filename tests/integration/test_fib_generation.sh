#!/usr/bin/env bash
# The netlink watcher: a route or neighbour change in the firewall's namespace
# bumps the FIB generation (so cached egress results in sessions are looked up
# again), and forwarding follows the new route.
source "$(dirname "$0")/lib.sh"
it_init fib_generation fg
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
it_sluice_start "$IT_TMP/fw.yaml"
pins="/sys/fs/bpf/sluice/netns/$P-fw/default"

fib_generation() {
    bpftool -j map dump pinned "$pins/runtime_cfg" | "$IT_PY" -c '
import json,sys
entry=json.load(sys.stdin)[0]
print(entry["formatted"]["value"]["fib_generation"] if "formatted" in entry else "")'
}
generation_above() { [ "$(fib_generation)" -gt "$1" ] 2>/dev/null; }

g0=$(fib_generation)
it_check "runtime_cfg shows a FIB generation ($g0)" test -n "$g0"
fw ip route add 198.19.0.0/24 via 198.18.100.200
it_check "adding a route bumps it" it_wait_for "generation above $g0" 50 generation_above "$g0"
g1=$(fib_generation)
fw ip -6 neigh replace 2001:2:0:100::77 lladdr 02:00:00:00:00:77 dev wan0 nud permanent
it_check "a neighbour change bumps it" it_wait_for "generation above $g1" 50 generation_above "$g1"
g2=$(fib_generation)
fw ip route del 198.19.0.0/24
it_check "removing the route bumps it" it_wait_for "generation above $g2" 50 generation_above "$g2"
it_check "traffic still forwarded (IPv4)" ping_ok lan "$WAN4"
it_check "traffic still forwarded (IPv6)" ping_ok lan "$WAN6"
it_finish
