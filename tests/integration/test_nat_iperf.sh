#!/usr/bin/env bash
# iperf3 through source NAT, IPv4 and IPv6: the transfer completes with bytes
# received (read from iperf3's JSON), the server saw the firewall's WAN
# address, and the GRO aggregates the fast path hands to the kernel were
# translated by tc_egress_prog (counters).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init nat_iperf ip
it_need_root_and_bpf
command -v iperf3 >/dev/null || it_skip_bpf "iperf3 is not installed (scripts/setup.sh installs it)"
it_topology_up
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }
NAT
it_sluice_start "$IT_TMP/fw.yaml"

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
peer = s["start"]["connected"][0]["remote_host"]
print("%d %.2f %s" % (recv["bytes"], recv["bits_per_second"] / 1e9, peer))' "$IT_TMP/client$fam.json" "$IT_TMP/server$fam.json" 2>&1)
    it_log "IPv$fam iperf3 through source NAT: bytes Gbit/s server-saw = $summary"
    read -r bytes gbps peer <<<"$summary"
    it_expect_ge "IPv$fam iperf3 received bytes through source NAT" "${bytes:-0}" 1000000
    it_expect_eq "IPv$fam iperf3 server saw the firewall's WAN address" "$fw_wan" "$peer"
    port=$((port + 1))
done
deferred=$(stat_value nat-source-left-to-tc-egress)
tc=$(stat_value tc-egress-nat-translated)
it_log "aggregates left to tc_egress_prog: $deferred, translated there: $tc"
if [ "${deferred:-0}" -gt 0 ]; then it_expect_ge "tc_egress_prog translated packets XDP handed to the kernel" "$tc" 1; fi
it_finish
