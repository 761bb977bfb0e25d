#!/usr/bin/env bash
# Egress by name, the race (issue 20): 10,000 queries (5,000 A, 5,000 AAAA),
# each for a name not asked before, each followed at once by a connection to
# the answer. sluice's DNS proxy writes each answer's address into the
# datapath before it releases the answer, so no first connection may be lost:
# every connect succeeds without a SYN retransmission, and the datapath's
# drop-egress-not-learned stays where it was.
source "$(dirname "$0")/lib.sh"
it_init egress_race er
it_need_root_and_bpf
command -v dnsmasq >/dev/null || it_skip "needs dnsmasq (scripts/setup.sh installs it)"
[ -f /etc/resolv.conf ] || it_skip "ip netns exec needs /etc/resolv.conf to bind the namespace's over"
it_topology_up
N=${EGRESS_RACE_QUERIES:-10000}

# The servers: every address of 198.18.128.0/18 and 2001:2:0:200::/64 is
# the WAN host's own (a local route), so one listener answers them all.
wan ip route add local 198.18.128.0/18 dev lo
wan ip -6 route add local 2001:2:0:200::/64 dev lo
fw ip route add 198.18.128.0/18 via 198.18.100.200
fw ip -6 route add 2001:2:0:200::/64 via 2001:2:0:100::200
it_server wan accept-server :: 8089

# N names, one address each, alternating families.
"$IT_PY" - "$N" "$IT_TMP/hosts" "$IT_TMP/names" <<'PY'
import ipaddress, sys
n, hosts, names = int(sys.argv[1]), open(sys.argv[2], "w"), open(sys.argv[3], "w")
v4, v6 = ipaddress.ip_address("198.18.128.1"), ipaddress.ip_address("2001:2:0:200::1")
for i in range(n):
    name = f"host{i:05d}.race.test"
    if i % 2 == 0:
        hosts.write(f"{v4 + i // 2} {name}\n"); names.write(f"{name} 4\n")
    else:
        hosts.write(f"{v6 + i // 2} {name}\n"); names.write(f"{name} 6\n")
PY
it_bg dns ip netns exec "$P-wan" dnsmasq --no-daemon --conf-file=/dev/null --pid-file= --user=root \
    --no-resolv --no-hosts --addn-hosts="$IT_TMP/hosts" --bind-interfaces --listen-address=198.18.100.200 \
    --local=/test/ --local-ttl=300 --log-facility=- --cache-size=0

it_write_topology_config "$IT_TMP/fw.yaml"
cat >>"$IT_TMP/fw.yaml" <<'YAML'
applications:
  race: { protocol: tcp, destination-port: 8089 }
policies:
  - { name: lan-out, from: trust, to: untrust, application: [race], action: permit }
default-action: deny
egress:
  upstreams: [198.18.100.200]
  scopes:
    lan:
      from: trust
      rules:
        - { action: allow, name: "*.race.test", destination-port: 8089 }
YAML
it_sluice_start "$IT_TMP/fw.yaml"

# The LAN host's resolver: the WAN host (the proxy answers in its name).
mkdir -p "/etc/netns/$P-lan"
printf 'nameserver 198.18.100.200\noptions attempts:1 timeout:3\n' >"/etc/netns/$P-lan/resolv.conf"
trap 'rc=$?; rm -rf "/etc/netns/$P-lan"; (exit $rc); it_cleanup' EXIT

sluice_fw show stats --json >"$IT_TMP/before.json"
drops0=$(stat_value "$IT_TMP/before.json" drop-egress-not-learned)
lan "$IT_PY" "$IT_DIR/egress_race.py" 8089 "$IT_TMP/names" 8 >"$IT_TMP/race.json" 2>"$IT_TMP/race.err" ||
    it_fail "the race client failed: $(tail -3 "$IT_TMP/race.err")"
it_log "race client: $(cat "$IT_TMP/race.json")"
sluice_fw show stats --json >"$IT_TMP/after.json"
# What else moved, for a reader of a failure: every drop counter that changed.
"$IT_PY" - "$IT_TMP/before.json" "$IT_TMP/after.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["counters"] for p in sys.argv[1:3])
moved = {k: b[k] - a.get(k, 0) for k in b if k.startswith("drop") and b[k] != a.get(k, 0)}
print("[egress_race] drop counters that moved:", moved or "none")
PY
wan nstat -az TcpExtListenOverflows TcpExtListenDrops 2>/dev/null | sed 's/^/[egress_race] wan: /'
field() { "$IT_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$IT_TMP/race.json" "$1"; }
it_expect_eq "every one of the $N names resolved" "$N" "$(field resolved)"
it_expect_eq "every first connection went through without a retransmission" "$N" "$(field connected)"
it_expect_eq "the datapath dropped no first packet (drop-egress-not-learned)" "$drops0" \
    "$(stat_value "$IT_TMP/after.json" drop-egress-not-learned)"
sluice_fw show egress --json >"$IT_TMP/egress.json"
it_check "the proxy learned at least $N addresses" "$IT_PY" -c \
    'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["dns"]["learned_addresses"] >= int(sys.argv[2]) else 1)' \
    "$IT_TMP/egress.json" "$N"
it_finish
