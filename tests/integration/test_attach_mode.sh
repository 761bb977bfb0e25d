#!/usr/bin/env bash
# Attach modes: `auto` on veth picks the tc mode (docs/design.md "Attach
# modes": native XDP on veth disables GSO/GRO, generic XDP cannot redirect GRO
# aggregates), and `check`, `show zones` say so and why; `native` on a device
# without native XDP (a bridge) falls back to generic with a warning that
# names the interface and the reason, and the firewall still runs.
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
sluice_fw check -c "$IT_TMP/fw.yaml" >"$IT_TMP/check.txt"
sed 's/^/    /' "$IT_TMP/check.txt"
it_check "check says lan0 would run in the tc mode, and why" \
    grep -Eq "attach lan0: tc \(veth; auto: on veth .*TC forwards them whole\)" "$IT_TMP/check.txt"
it_check "check says wan0 would run generic XDP because the file asks" \
    grep -Eq "attach wan0: generic \(veth; xdp-mode: generic\)" "$IT_TMP/check.txt"

it_sluice_start "$IT_TMP/fw.yaml"

it_expect_eq "lan0 (veth, xdp-mode auto) runs no XDP program" "" "$(xdp_mode_of lan0)"
it_check "lan0's TC ingress runs the pipeline (tc_main_prog)" \
    sh -c "ip netns exec '$P-fw' tc -j filter show dev lan0 ingress | grep -q '\"name\":\"tc_main_prog\"'"
it_expect_eq "wan0 (veth, xdp-mode generic) runs generic XDP" generic "$(xdp_mode_of wan0)"
it_expect_eq "dmz0 (bridge, xdp-mode native) fell back to generic XDP" generic "$(xdp_mode_of dmz0)"
# The reason is the driver's refusal, or on a kernel that refuses
# bpf_xdp_adjust_meta to XDP programs, that (native XDP is then never used).
it_check "the daemon warned about dmz0, naming the interface and the reason" \
    grep -Eq "warning: interface dmz0: native XDP (attach failed \(.+\)|is not used: .+bpf_xdp_adjust_meta.+); using generic XDP" "$SLUICE_LOG"
grep "warning: interface dmz0" "$SLUICE_LOG" | sed 's/^/    /'

sluice_fw show zones --json >"$IT_TMP/zones.json"
mode=$("$IT_PY" -c '
import json,sys
for z in json.load(open(sys.argv[1]))["zones"]:
    for i in z["interfaces"]:
        if i["name"] == "dmz0": print(i.get("xdp_mode",""), bool(i.get("warning")))' "$IT_TMP/zones.json")
it_expect_eq "show zones --json reports dmz0 as generic with its warning" "generic True" "$mode"
why=$("$IT_PY" -c '
import json,sys
for z in json.load(open(sys.argv[1]))["zones"]:
    for i in z["interfaces"]:
        if i["name"] == "lan0": print(i.get("xdp_mode",""), "veth" in i.get("xdp_mode_why",""))' "$IT_TMP/zones.json")
it_expect_eq "show zones --json reports lan0 in the tc mode, chosen for veth" "tc True" "$why"
it_check "show zones names the mode and the reason" \
    sh -c "'$SLUICE' --netns '$P-fw' show zones | grep -q 'lan0: tc (auto: on veth'"
it_check "traffic still flows lan → wan (IPv4)" ping_ok lan "$WAN4"
it_check "traffic still flows lan → wan (IPv6)" ping_ok lan "$WAN6"

# Native XDP and the hand-off to TC: a config without inspect policies or a
# SYN proxy runs native XDP where it is asked for; adding an inspect policy
# by reload is refused on a kernel that refuses bpf_xdp_adjust_meta to XDP
# (the record would have nowhere to go), accepted elsewhere.
it_log "native XDP, then a reload that adds an inspect policy"
sluice_fw down >/dev/null 2>&1
it_forget_pid "$SLUICE_PID"
cat >"$IT_TMP/native.yaml" <<'YAML'
interfaces:
  lan0: { zone: trust, xdp-mode: native }
  wan0: { zone: untrust, xdp-mode: generic }
zones:
  trust: {}
  untrust: {}
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
default-action: deny
YAML
sed 's/action: permit }/action: { inspect: web } }\ninspect: { rulesets: { web: { patterns: [ { name: p, regex: "x", action: reject } ] } } }/' \
    "$IT_TMP/native.yaml" >"$IT_TMP/native-inspect.yaml"
sluice_fw check -c "$IT_TMP/native-inspect.yaml" >"$IT_TMP/check-inspect.txt" || it_fail "check of the inspect config" "$(cat "$IT_TMP/check-inspect.txt")"
no_meta=0
grep -q "bpf_xdp_adjust_meta" "$IT_TMP/check-inspect.txt" && no_meta=1
it_log "this kernel $([ $no_meta = 1 ] && echo refuses || echo allows) bpf_xdp_adjust_meta to XDP programs"
cp "$IT_TMP/native.yaml" "$IT_TMP/live.yaml"
it_sluice_start "$IT_TMP/live.yaml"
it_expect_eq "lan0 (xdp-mode native, no inspect policy) runs native XDP" native "$(xdp_mode_of lan0)"
cp "$IT_TMP/native-inspect.yaml" "$IT_TMP/live.yaml"
if [ $no_meta = 1 ]; then
    it_check "the reload that adds an inspect policy is refused" sh -c "! '$SLUICE' --netns '$P-fw' reload >'$IT_TMP/reload.out' 2>&1"
    it_check "... naming the interface, the kernel's refusal and the fix" \
        grep -q "lan0 run(s) native XDP: give them xdp-mode: tc" "$IT_TMP/reload.out"
    it_check "... and the running config stays (no inspect policy)" \
        sh -c "'$SLUICE' --netns '$P-fw' show policies | grep -q 'lan-out.*permit'"
else
    it_check "the reload that adds an inspect policy is accepted" sluice_fw reload
fi
it_finish
