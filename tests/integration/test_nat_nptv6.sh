#!/usr/bin/env bash
# NPTv6 (RFC 6296) with real traffic: 2001:2:0:1::/64 inside is
# 2001:2:0:300::/64 outside. The WAN host sees the LAN host under the outside
# prefix with an address whose one's-complement sum equals the inside one
# (checksum-neutral: one interface-identifier word absorbs the difference),
# and reaches the LAN host at that address.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init nat_nptv6 np
it_need_root_and_bpf
it_topology_up
wan ip -6 route add 2001:2:0:300::/64 via 2001:2:0:100::1
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  nptv6:
    - { inside: "2001:2:0:1::/64", outside: "2001:2:0:300::/64" }
NAT
it_sluice_start "$IT_TMP/fw.yaml"

it_server wan peer-server "$WAN6" 8080
seen=$(ask_addr lan "$WAN6" 8080)
it_log "the WAN host sees the LAN host $LAN6 as $seen"
it_check "the source is under the outside prefix, checksum-neutral, with the rest of the identifier kept" \
    "$IT_PY" -c '
import ipaddress, sys
inside, seen = ipaddress.IPv6Address(sys.argv[1]), ipaddress.IPv6Address(sys.argv[2])
assert seen in ipaddress.IPv6Network("2001:2:0:300::/64"), seen
def words(a): return [int.from_bytes(a.packed[i:i + 2], "big") for i in range(0, 16, 2)]
def ones_sum(ws):
    s = 0
    for w in ws:
        s += w
        s = (s & 0xffff) + (s >> 16)
    return 0 if s == 0xffff else s
assert ones_sum(words(inside)) == ones_sum(words(seen)), (inside, seen)
assert words(inside)[5:] == words(seen)[5:], (inside, seen)' "$LAN6" "$seen"

it_server lan peer-server "$LAN6" 80
it_expect_eq "WAN -> [$seen]:80 reaches the LAN host, which sees the WAN host" "$WAN6" "$(ask_addr wan "$seen" 80)"
it_finish
