#!/usr/bin/env bash
# The `tc` mode (xdp-mode: tc): the pipeline runs as a TC ingress filter
# (tc_main_prog) instead of an XDP program. On veth that is where GRO
# aggregates can be forwarded whole: the test checks the hooks (no XDP, the
# pipeline ahead of tc_punt_prog on ingress), the verdicts (permit, deny,
# reject: the RST goes back out of the ingress interface), iperf3 through
# source NAT both families with the server seeing the firewall's address, and
# that the pipeline forwarded the aggregates itself: `forward` moved by
# thousands while `pass-larger-than-egress-mtu` (what generic XDP must hand
# to the kernel) did not move at all.
source "$(dirname "$0")/lib.sh"
it_init tc_mode tm
it_need_root_and_bpf
command -v iperf3 >/dev/null || it_skip_bpf "iperf3 is not installed (scripts/setup.sh installs it)"
it_topology_up

cat >"$IT_TMP/fw.yaml" <<'YAML'
interfaces:
  lan0: { zone: trust, xdp-mode: tc }
  wan0: { zone: untrust, xdp-mode: tc }
zones:
  trust: {}
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
applications:
  web: { protocol: tcp, destination-port: [5201-5202, 8080-8089] }
  ping: { protocol: icmp }
  blocked: { protocol: tcp, destination-port: 7000 }
  refused: { protocol: tcp, destination-port: 7001 }
policies:
  - { name: lan-out, from: trust, to: untrust, source: [lan-net], application: [web, ping], action: permit }
  - { name: lan-deny, from: trust, to: untrust, application: [blocked], action: deny }
  - { name: lan-reject, from: trust, to: untrust, application: [refused], action: reject }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
default-action: deny
YAML
it_sluice_start "$IT_TMP/fw.yaml"

# --- the hooks ------------------------------------------------------------------
for dev in lan0 wan0; do
    it_check "$dev has no XDP program (tc mode)" sh -c "! ip netns exec $P-fw ip -d link show dev $dev | grep -q 'prog/xdp'"
    fw tc -j filter show dev "$dev" ingress >"$IT_TMP/ingress-$dev.json"
    order=$("$IT_PY" -c '
import json, sys
progs = [(f["pref"], f["options"].get("bpf_name", "")) for f in json.load(open(sys.argv[1]))
         if f.get("kind") == "bpf" and "options" in f]
print(" ".join(name.split(":")[0] for _, name in sorted(progs)))' "$IT_TMP/ingress-$dev.json")
    it_expect_eq "$dev ingress runs the pipeline, then tc_punt_prog" "tc_main_prog tc_punt_prog" "$order"
done
sluice_fw show zones --json >"$IT_TMP/zones.json"
modes=$("$IT_PY" -c '
import json, sys
print(" ".join(sorted("%s=%s" % (i["name"], i.get("xdp_mode", "")) for z in json.load(open(sys.argv[1]))["zones"]
                      for i in z["interfaces"])))' "$IT_TMP/zones.json")
it_expect_eq "show zones --json reports both interfaces in tc mode" "lan0=tc wan0=tc" "$modes"
it_check "show zones says tc" sh -c "'$SLUICE' --netns $P-fw show zones | grep -q 'lan0 \[tc\]'"

# --- verdicts -------------------------------------------------------------------
it_check "ping lan → wan (IPv4)" ping_ok lan "$WAN4"
it_check "ping lan → wan (IPv6)" ping_ok lan "$WAN6"
it_server wan accept-server "$WAN4" 7000
it_server wan accept-server "$WAN4" 7001
denied_before=$(sluice_fw show stats --json | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)["counters"]["drop-policy-deny"])')
it_expect_eq "tcp 7000 (policy deny) times out" timeout "$(probe lan "$WAN4" 7000 2)"
denied_after=$(sluice_fw show stats --json | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)["counters"]["drop-policy-deny"])')
it_expect_ge "drop-policy-deny counted the denied SYNs" "$((denied_after - denied_before))" 1
it_expect_eq "tcp 7001 (policy reject) is refused: the RST left by lan0" refused "$(probe lan "$WAN4" 7001 3)"

# --- bulk TCP through source NAT --------------------------------------------------
counters() {
    sluice_fw show stats --json | "$IT_PY" -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print(c["forward"], c["pass-larger-than-egress-mtu"])'
}
tx_packets() { fw ip -j -s link show "$1" | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])'; }
read -r fwd_before over_before <<<"$(counters)"
wan_tx_before=$(tx_packets wan0)
port=5201
for fam in 4 6; do
    if [ $fam = 4 ]; then dst=$WAN4 fw_wan=198.18.100.1; else dst=$WAN6 fw_wan=2001:2:0:100::1; fi
    it_bg "iperf3-server$fam" ip netns exec "$P-wan" iperf3 -s -1 -B "$dst" -p $port -J --logfile "$IT_TMP/server$fam.json"
    server_pid=$IT_LAST_PID
    it_wait_for "iperf3 server on $port" 50 sh -c "ip netns exec $P-wan ss -ltn | grep -q ':$port '"
    lan iperf3 -c "$dst" -p $port -t 3 -J >"$IT_TMP/client$fam.json" 2>"$IT_TMP/client$fam.err"
    it_wait_for "iperf3 server exit" 50 sh -c "! kill -0 $server_pid 2>/dev/null"
    it_forget_pid "$server_pid"
    summary=$("$IT_PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
recv = c["end"]["sum_received"]
print("%d %.2f %s %d" % (recv["bytes"], recv["bits_per_second"] / 1e9,
                         s["start"]["connected"][0]["remote_host"], s["end"]["sum_received"]["bytes"]))' \
        "$IT_TMP/client$fam.json" "$IT_TMP/server$fam.json" 2>&1)
    it_log "IPv$fam iperf3 in tc mode through source NAT: bytes Gbit/s server-saw server-bytes = $summary"
    read -r bytes gbps peer server_bytes <<<"$summary"
    it_expect_ge "IPv$fam iperf3 received bytes" "${bytes:-0}" 1000000
    it_expect_eq "IPv$fam the server received what the client says was received" "${bytes:-0}" "${server_bytes:-x}"
    it_expect_eq "IPv$fam iperf3 server saw the firewall's WAN address" "$fw_wan" "$peer"
    port=$((port + 1))
done
read -r fwd_after over_after <<<"$(counters)"
wan_tx=$(( $(tx_packets wan0) - wan_tx_before ))
it_log "tc pipeline: forward +$((fwd_after - fwd_before)), pass-larger-than-egress-mtu +$((over_after - over_before)), wan0 tx +$wan_tx"
# wan0 and lan0 are veths with their peers in the hosts' namespaces: the
# pipeline hands each packet to the peer (bpf_redirect_peer), so wan0's own
# transmit counts none of the transfer's packets (ARP/ND and the like only).
it_expect_ge "forwarded packets went to wan0's peer directly, not through wan0's transmit (tx +$wan_tx)" \
    "$(( (fwd_after - fwd_before) / 100 ))" "$wan_tx"
it_expect_ge "the TC pipeline forwarded the transfers' packets itself" "$((fwd_after - fwd_before))" 1000
it_expect_eq "no aggregate was handed to the kernel for its size" 0 "$((over_after - over_before))"
it_finish
