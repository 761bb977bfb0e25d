#!/usr/bin/env bash
# The single-firewall lab (LAN host <P>-lan, firewall <P>-fw, WAN host <P>-wan)
# for shell callers. It is built by sluice's one topology builder
# (userspace/cluster/topology.h): this file only names the commands.
#
#   <P>-lan  eth0 198.18.1.10   2001:2:0:1::10    ── lan0 <P>-fw wan0 ──  eth0 198.18.100.200  2001:2:0:100::200  <P>-wan
#                                                    198.18.1.1          198.18.100.1
#                                                    2001:2:0:1::1       2001:2:0:100::1
#
# Source this file, set SLUICE to the binary, then: topology_up PREFIX [TOPOLOGY];
# ...; topology_down PREFIX. Every namespace name starts with PREFIX, so two
# labs coexist. topology_down also stops what still runs in them, runs
# `sluice down` in the firewall and removes its pins.

topology_up() {
    "${SLUICE:?set SLUICE to the sluice binary}" cluster up --topology "${2:-single}" --bare --prefix "$1" >/dev/null
}

topology_down() {
    "${SLUICE:?set SLUICE to the sluice binary}" cluster down --prefix "$1" >/dev/null
}
