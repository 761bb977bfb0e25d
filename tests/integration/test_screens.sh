#!/usr/bin/env bash
# Packet-flood and scan screens with real traffic (docs/host-protection.md):
# - trust has `source-limit: { icmp-packets: 20 }`: a fast ping from the LAN
#   host loses what is over 20 per second, every loss is counted
#   (replies + drop-screen-icmp-flood = requests), a normal ping a second
#   later gets every answer;
# - untrust has a scan screen (20 ports in 10 s, block for 60 s) and
#   `host-inbound: [ping]`: the WAN host pings the firewall, then probes 40
#   ports of the LAN host; it is counted once as a scan, every probe is a
#   policy drop or a scan drop, and afterwards its ping to the firewall is
#   dropped while the LAN host's connection to it goes on. IPv4 and IPv6.
source "$(dirname "$0")/lib.sh"
it_init screens sc
it_need_root_and_bpf
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy' 2>/dev/null || it_skip_bpf "python3-scapy is not installed"
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
sed -i 's/^  trust: {}$/  trust: { screen: { source-limit: { icmp-packets: 20 } } }/' "$IT_TMP/fw.yaml"
sed -i 's/^  untrust: {}$/  untrust: { host-inbound: [ping], screen: { scan: { ports: 20, window: 10s, action: block, hold-time: 60s } } }/' "$IT_TMP/fw.yaml"
grep -q 'icmp-packets: 20' "$IT_TMP/fw.yaml" && grep -q 'scan: { ports: 20' "$IT_TMP/fw.yaml" ||
    it_fail "config has both screens"
it_sluice_start "$IT_TMP/fw.yaml"

stats() { sluice_fw show stats --json >"$IT_TMP/stats.json"; stat_value "$IT_TMP/stats.json" "$1"; }
screen_counter() {  # screen_counter ZONE NAME
    sluice_fw show screens --json | "$IT_PY" -c 'import json,sys
for z in json.load(sys.stdin)["zones"]:
    if z["zone"] == sys.argv[1]: print(z["counters"][sys.argv[2]])' "$1" "$2"
}

it_log "checking: an ICMP flood from one source is held at its rate"
for fam in 4 6; do
    if [ $fam = 4 ]; then dst=$WAN4; else dst=$WAN6; fi
    before=$(stats drop-screen-icmp-flood)
    out=$(lan ping -$fam -n -q -c 200 -i 0.002 -W 1 "$dst" 2>&1)
    sent=$(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1/p' <<<"$out")
    received=$(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\2/p' <<<"$out")
    ms=$(sed -n 's/.* received, .*time \([0-9]*\)ms.*/\1/p' <<<"$out")
    dropped=$(( $(stats drop-screen-icmp-flood) - before ))
    # One-second windows: a run of T ms touches at most T/1000 + 2 of them.
    allowed=$(( 20 * (${ms:-0} / 1000 + 2) ))
    it_check "IPv$fam: 200 echo requests in ${ms}ms: $received answered (at most $allowed: 20 per window)" \
        test -n "$ms" -a "${received:-999}" -le "$allowed" -a "${received:-0}" -ge 20
    it_expect_eq "IPv$fam: answered + drop-screen-icmp-flood = requests sent" "$sent" $((received + dropped))
    sleep 1.2
    it_check "IPv$fam: a normal ping a second later gets its answers" ping_ok lan "$dst"
done
it_expect_eq "show screens counts trust's ICMP drops as show stats does" "$(stats drop-screen-icmp-flood)" \
    "$(screen_counter trust source_icmp_drops)"

it_log "checking: a port scan from the WAN host is counted and blocked"
it_server wan echo-server "$WAN4" 8080
chat_open held "$WAN4" 8080 || it_fail "LAN -> WAN:8080 connection before the scan"
it_check "WAN host pings the firewall before the scan (host-inbound ping on untrust)" ping_ok wan 198.18.100.1
denied_before=$(stats drop-policy-deny)
scan_before=$(stats drop-screen-scan)
wan "$IT_PY" - "$LAN4" "$LAN6" <<'PY'
import sys
from scapy.all import Ether, IP, IPv6, TCP, sendp, conf, get_if_hwaddr
conf.verb = 0
mac = get_if_hwaddr("eth0")
frames = [Ether(src=mac) / IP(dst=sys.argv[1]) / TCP(sport=33333, dport=1000 + i, flags="S") for i in range(40)]
sendp(frames, iface="eth0")
PY
sleep 0.5
denied=$(( $(stats drop-policy-deny) - denied_before ))
blocked=$(( $(stats drop-screen-scan) - scan_before ))
it_expect_eq "the scan is detected once" 1 "$(stats screen-scan-detected)"
it_check "the first ~20 probes met the policy (nothing-in), the rest the block: $denied + $blocked" \
    test "$denied" -ge 15 -a "$denied" -le 25
it_expect_eq "policy drops + scan drops = the 40 probes" 40 $((denied + blocked))
it_check "the blocked WAN host's ping to the firewall is dropped" sh -c "! ip netns exec $P-wan ping -q -c 2 -i 0.2 -W 1 198.18.100.1 >/dev/null 2>&1"
it_check "... by the scan block (drop-screen-scan grew)" test "$(stats drop-screen-scan)" -gt $((scan_before + blocked))
it_check "the LAN host's connection to the blocked host goes on (replies have a session)" chat_exchange held 5 1000
it_check "the WAN host over IPv6 is another source: its ping to the firewall passes" ping_ok wan 2001:2:0:100::1
it_expect_eq "show screens counts untrust's scan as show stats does" 1 "$(screen_counter untrust scans_detected)"
it_expect_eq "show screens counts untrust's scan drops as show stats does" "$(stats drop-screen-scan)" \
    "$(screen_counter untrust scan_drops)"
sluice_fw show screens
it_finish
