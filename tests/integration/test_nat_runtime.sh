#!/usr/bin/env bash
# The controller's side of NAT, before any packet is translated: with NAT rules
# the daemon sets accept_local on its interfaces, writes the interfaces'
# addresses to nat_ifaddrs and follows address changes, `show nat` lists rules,
# pools, addresses and translations, and the session GC deletes an expired
# source-translated flow (both entries, or the one left) together with its port
# reservation while leaving other reservations alone. Translated flows are
# injected into the pinned maps (nat_inject.py).
source "$(dirname "$0")/lib.sh"
it_init nat_runtime nr
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
cat >>"$IT_TMP/fw.yaml" <<'YAML'
timeouts: { udp: 2s, icmp: 2s }   # the ping below that starts the GC walk is translated too
nat:
  pools:
    public: { addresses: [198.18.100.10-198.18.100.20], ports: 1024-65535 }
  source:
    - { name: lan-out, from: trust, to: untrust, source: [lan-net], translate: interface }
    - { name: lan-pool, from: trust, to: untrust, translate: { pool: public } }
YAML
it_sluice_start "$IT_TMP/fw.yaml"
PIN="/sys/fs/bpf/sluice/netns/$P-fw/default"
INJECT="$IT_DIR/nat_inject.py"

for itf in lan0 wan0; do
    it_expect_eq "accept_local on $itf" 1 "$(fw cat /proc/sys/net/ipv4/conf/$itf/accept_local)"
done
it_check "the daemon says why it sets accept_local" grep -q "accept_local=1 on lan0, wan0 (.*martians)" "$SLUICE_LOG"

nat_json() { sluice_fw show nat --json >"$IT_TMP/nat.json"; }
jq_nat() {  # jq_nat PYTHON-EXPRESSION over d (the show nat JSON)
    nat_json && "$IT_PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$IT_TMP/nat.json"
}
it_check "show nat --json exits 0" nat_json
it_expect_eq "top-level keys" "interfaces,pools,rules,translations" "$(jq_nat "','.join(sorted(d))")"
it_expect_eq "rules from the running config" "lan-out,lan-pool" "$(jq_nat "','.join(r['name'] for r in d['rules'])")"
it_expect_eq "pool capacity (11 addresses x 64512 ports)" 709632 "$(jq_nat "d['pools'][0]['capacity_per_protocol']")"
wan_addr() { jq_nat "[(i['ipv4'], i['ipv6']) for i in d['interfaces'] if i['name'] == 'wan0']"; }
it_expect_eq "wan0's addresses in nat_ifaddrs" "[('198.18.100.1', '2001:2:0:100::1')]" "$(wan_addr)"

fw ip -6 addr del 2001:2:0:100::1/64 dev wan0
fw ip -6 addr add 2001:2:0:100::7/64 dev wan0 nodad
wan6_is() { [ "$(jq_nat "[i['ipv6'] for i in d['interfaces'] if i['name'] == 'wan0'][0]")" = "$1" ]; }
it_check "an address change reaches nat_ifaddrs" it_wait_for "wan0 IPv6 ::7" 50 wan6_is 2001:2:0:100::7

"$IT_PY" "$INJECT" "$PIN" flow udp 198.18.1.10:40000 198.18.100.200:53 198.18.100.12:2000
"$IT_PY" "$INJECT" "$PIN" flow udp 198.18.1.10:40001 198.18.100.200:53 198.18.100.1:3000 --lone
"$IT_PY" "$INJECT" "$PIN" port udp 198.18.100.13:4000 198.18.1.99:5000   # held by no flow here
it_expect_eq "translations listed" 2 "$(jq_nat "len(d['translations'])")"
it_expect_eq "the pooled flow's reservation names its inside host" "198.18.1.10:40000" \
    "$(jq_nat "[t['reservation'].get('inside') for t in d['translations'] if t['translated']['source'] == '198.18.100.12:2000'][0]")"
it_expect_eq "pool in use (udp)" 2 "$(jq_nat "d['pools'][0]['in_use']['udp']")"
it_expect_eq "wan0 address in use (udp)" 1 "$(jq_nat "[i['in_use']['udp'] for i in d['interfaces'] if i['name'] == 'wan0'][0]")"
sluice_fw show sessions --json >"$IT_TMP/s.json"
it_expect_eq "show sessions carries the translation" "198.18.100.12:2000" \
    "$("$IT_PY" -c "import json,sys; print([s['nat']['src'] for s in json.load(open(sys.argv[1]))['sessions'] if 'nat' in s and s['source_port'] == 40000][0])" "$IT_TMP/s.json")"

# GC walks when sessions are created (or when one is due): a ping starts it.
# With the NAT datapath the ping is itself source-translated (lan-out) and
# holds a port on wan0's address until its session expires, which checks the
# release of a reservation the datapath made, not only of injected ones.
lan ping -q -c 1 -W 2 "$WAN4" >/dev/null
reservations() { bpftool -j map dump pinned "$PIN/nat_ports" | "$IT_PY" -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
only_unheld_left() { [ "$(reservations)" = 1 ] && [ "$(jq_nat "len(d['translations'])")" = 0 ]; }
it_check "expired translated flows are gone with their reservations" it_wait_for "GC" 100 only_unheld_left
it_expect_eq "the reservation no expired flow held stays (198.18.100.13, in the pool)" 1 \
    "$(jq_nat "d['pools'][0]['in_use']['udp']")"
it_finish
