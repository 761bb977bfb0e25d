#!/usr/bin/env bash
# Attach modes: `auto` on veth picks generic XDP (docs/design.md "Attach modes":
# native XDP on veth disables GSO/GRO); `native` on a device without native XDP (a bridge)
# falls back to generic with a warning that names the interface and the
# kernel's reason, and the firewall still runs.
source "$(dirname "$0")/lib.sh"
it_init attach_mode am
it_need_root_and_bpf
it_topology_up single-dmz   # the single lab plus an empty bridge dmz0 on the firewall

# xdp_mode_of DEV: "generic", "native" or "" from `ip -d link`.
xdp_mode_of() {
    local out
    out=$(fw ip -d link show dev "$1")
    case "$out" in
        *"xdpgeneric"*) echo generic ;;
        *"xdpdrv"*|*"prog/xdp id"*) echo native ;;
        *) echo "" ;;
    esac
}

cat >"$IT_TMP/fw.yaml" <<'YAML'
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust, xdp-mode: generic }
  dmz0: { zone: dmz, xdp-mode: native }
zones:
  trust: {}
  untrust: {}
  dmz: {}
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
default-action: deny
YAML
it_sluice_start "$IT_TMP/fw.yaml"

it_expect_eq "lan0 (veth, xdp-mode auto) runs generic XDP" generic "$(xdp_mode_of lan0)"
it_expect_eq "wan0 (veth, xdp-mode generic) runs generic XDP" generic "$(xdp_mode_of wan0)"
it_expect_eq "dmz0 (bridge, xdp-mode native) fell back to generic XDP" generic "$(xdp_mode_of dmz0)"
it_check "the daemon warned about dmz0, naming the interface and the reason" \
    grep -Eq "warning: interface dmz0: native XDP attach failed \(.+\); using generic XDP" "$SLUICE_LOG"
grep "warning: interface dmz0" "$SLUICE_LOG" | sed 's/^/    /'

sluice_fw show zones --json >"$IT_TMP/zones.json"
mode=$("$IT_PY" -c '
import json,sys
for z in json.load(open(sys.argv[1]))["zones"]:
    for i in z["interfaces"]:
        if i["name"] == "dmz0": print(i.get("xdp_mode",""), bool(i.get("warning")))' "$IT_TMP/zones.json")
it_expect_eq "show zones --json reports dmz0 as generic with its warning" "generic True" "$mode"
it_check "traffic still flows lan → wan (IPv4)" ping_ok lan "$WAN4"
it_check "traffic still flows lan → wan (IPv6)" ping_ok lan "$WAN6"
it_finish
