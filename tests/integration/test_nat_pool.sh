#!/usr/bin/env bash
# Source NAT to a pool with real traffic: the upstream routes the pool
# (198.18.200.0/24, 2001:2:0:200::/64) to the firewall; the WAN host sees LAN
# traffic from a pool address, the same one for every flow of the host
# (persistent), IPv4 and IPv6; `show nat --json` counts the pool in use.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init nat_pool pl
it_need_root_and_bpf
it_topology_up
wan ip route add 198.18.200.0/24 via 198.18.100.1
wan ip -6 route add 2001:2:0:200::/64 via 2001:2:0:100::1
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  pools:
    public: { addresses: [198.18.200.10-198.18.200.13, "2001:2:0:200::10-2001:2:0:200::13"], ports: 20000-29999, persistent: true }
  source:
    - { name: lan-out, from: trust, to: untrust, source: [lan-net], translate: { pool: public } }
NAT
it_sluice_start "$IT_TMP/fw.yaml"

for fam in 4 6; do
    if [ $fam = 4 ]; then dst=$WAN4 pool_re='^198\.18\.200\.1[0-3]$'; else dst=$WAN6 pool_re='^2001:2:0:200::1[0-3]$'; fi
    it_server wan peer-server "$dst" 8080
    first=$(chat lan ask --host "$dst" --port 8080)
    second=$(chat lan ask --host "$dst" --port 8080)
    it_log "IPv$fam: the WAN host saw '$first' then '$second'"
    it_check "IPv$fam: the WAN host sees a pool address" grep -Eq "$pool_re" <<<"${first% *}"
    it_check "IPv$fam: the port is from the pool's range" test "${first#* }" -ge 20000 -a "${first#* }" -le 29999
    it_expect_eq "IPv$fam: a second flow of the host gets the same pool address (persistent)" "${first% *}" "${second% *}"
done

it_server wan echo-server "$WAN4" 8081
chat_open keep "$WAN4" 8081
sluice_fw show nat --json >"$IT_TMP/nat.json"
it_check "show nat --json counts the open flow's port in the pool" "$IT_PY" -c '
import json, sys
pool = [p for p in json.load(open(sys.argv[1]))["pools"] if p["name"] == "public"][0]
assert pool["by_family"]["ipv4"]["in_use"]["tcp"] >= 1, pool' "$IT_TMP/nat.json"
it_finish
