#!/usr/bin/env bash
# `sluice check -c FILE` rejects bad configs: exit status 1 and, on stderr, the
# exact line FILE:LINE:COL: PATH: MESSAGE for every problem (the same lines
# tests/unit/config_errors_test.cpp expects from the parser). Each file is one
# counted check; a good file passes with status 0. Needs no root.
source "$(dirname "$0")/lib.sh"
it_init check_bad_configs ck
data="$IT_SRC/tests/data/configs"

# file <TAB> expected stderr line without the leading "FILE:" (one row per line)
table=$(cat <<'TABLE'
bad-unknown-application.yaml	14:25: policies[0].application[1]: unknown application "htp" (did you mean "http"?)
bad-unknown-zone.yaml	3:17: interfaces.wan0.zone: unknown zone "untrsut" (did you mean "untrust"?)
bad-unknown-key.yaml	11:5: policies[0].destnation: unknown key "destnation" (did you mean "destination"?)
bad-unknown-address.yaml	13:14: policies[0].source[0]: unknown address-book entry "lan-nett" (did you mean "lan-net"?)
bad-duplicate-policy.yaml	12:11: policies[1].name: duplicate policy name "allow"
bad-duplicate-zone.yaml	6:3: zones.trust: duplicate zone "trust"
bad-prefix-length.yaml	8:13: address-book.lan-net[0]: invalid prefix length in "198.18.1.0/33" (0-32)
bad-host-bits.yaml	8:32: address-book.lan-net[1]: prefix "198.18.1.1/24" has host bits set (did you mean "198.18.1.0/24"?)
bad-ipv6-address.yaml	11:18: policies[0].destination: invalid IPv6 address "2001:2::zz"
bad-port-range.yaml	8:50: applications.alt.destination-port[1]: port range "9000-8000" is reversed (low > high)
bad-port-value.yaml	8:43: applications.big.destination-port: port "70000" out of range 0-65535
bad-protocol.yaml	8:20: applications.web.protocol: invalid protocol "tpc" (expected tcp, udp, icmp, icmpv6 or a number 0-255)
bad-unsupported-protocol.yaml	8:20: applications.gre.protocol: protocol 47 is not supported in applications yet (use tcp, udp, icmp or icmpv6)
bad-icmp-port.yaml	8:45: applications.ping.destination-port: destination-port needs protocol tcp or udp, not icmp
bad-action.yaml	11:13: policies[0].action: invalid value "allow": expected permit, deny or reject
bad-default-action.yaml	7:17: default-action: invalid value "inspect": expected permit, deny or reject
bad-inspect-ruleset.yaml	11:24: policies[0].action.inspect: unknown ruleset "ctff" (did you mean "ctf"?)
bad-inspect-pattern.yaml	10:18: inspect.rulesets.ctf.fail-mode: invalid value "shut": expected closed or open
bad-inspect-pattern.yaml	12:51: inspect.rulesets.ctf.patterns[0].direction: invalid value "sideways": expected client-to-server, server-to-client or both
bad-duration.yaml	7:22: timeouts.tcp-syn: invalid duration "30x" (expected a positive number with s, m or h, e.g. 30s, 5m, 2h)
bad-duration-zero.yaml	8:8: timeouts.udp: invalid duration "0s" (expected a positive number with s, m or h, e.g. 30s, 5m, 2h)
bad-xdp-mode.yaml	2:34: interfaces.lan0.xdp-mode: invalid value "nativ": expected auto, native, generic or tc (did you mean "native"?)
bad-vlan-id.yaml	2:3: interfaces.wan0.4095: invalid VLAN id "4095" in "wan0.4095" (a VLAN sub-interface is PARENT.VID with VID 1-4094)
bad-no-interfaces.yaml	1:1: interfaces: no interfaces: sluice needs at least one interface to attach to
bad-missing-from.yaml	8:5: policies[0]: missing "from"
bad-yaml-syntax.yaml	3:6: YAML syntax error: end of map flow not found
bad-wrong-type.yaml	3:8: zones: expected a mapping, got a list
bad-unknown-filter.yaml	2:34: interfaces.wan0.filter: unknown filter "wan-inn" (did you mean "wan-in"?)
bad-nat.yaml	9:27: nat.pools.public.addresses[0]: invalid address range "198.18.100.20-198.18.100.10" (both ends of one family, low end first)
bad-nat.yaml	11:65: nat.source[0].translate.pool: unknown pool "publc" (did you mean "public"?)
bad-nat-pools.yaml	9:25: nat.pools.empty.addresses: a pool needs at least one address, prefix or range
bad-nat-pools.yaml	10:25: nat.pools.wide.addresses[0]: "2001:2::/64" is too wide: IPv6 pool ranges must differ only in the last 32 bits
bad-nat-pools.yaml	10:40: nat.pools.wide.addresses[1]: "2001:2:0:1::-2001:2:0:1:0:1::" is too wide: IPv6 pool ranges must differ only in the last 32 bits
bad-nat-pools.yaml	11:44: nat.pools.zero.ports: pool ports must be within 1-65535, got "0-1000"
bad-nat-pools.yaml	13:37: nat.pools.b.addresses[1]: overlaps nat.pools.a.addresses[0] (198.18.100.10-198.18.100.20)
bad-nat-pools.yaml	14:24: nat.pools.many.addresses: too many IPv4 ranges: 9 (at most 8)
bad-nat-pools.yaml	16:24: nat.pools.huge.addresses: too many IPv6 addresses: 4294967296 (at most 4294967295)
bad-nat-source.yaml	13:82: nat.source[0].translate.pool: pool "public4" has no IPv6 address, but rule "v6-out" matches only IPv6
bad-nat-source.yaml	15:101: nat.source[2].translate.pool: pool "public4" has no IPv6 address, but rule "to-v6" matches only IPv6
bad-nat-destination.yaml	13:7: nat.destination[1]: overlaps nat.destination[0] (web-in)
bad-nat-destination.yaml	17:52: nat.destination[3].destination: destination 198.18.100.15 is an address of nat.pools.public.addresses (198.18.100.10-198.18.100.20)
bad-nat-destination.yaml	18:54: nat.destination[4].destination: destination 198.18.100.50 is also translated by nat.static[0] (outside 198.18.100.50/32)
bad-nat-static.yaml	12:17: nat.static[1].inside: overlaps nat.static[0].inside (198.18.1.0/28)
bad-nat-static.yaml	13:41: nat.static[2].outside: overlaps nat.static[0].outside (198.18.100.64/28)
bad-nat-static.yaml	14:41: nat.static[3].outside: overlaps its own inside prefix (198.18.3.0/24)
bad-nat-static.yaml	15:38: nat.static[4].outside: overlaps nat.pools.public.addresses (198.18.100.10-198.18.100.20)
bad-nat-static.yaml	18:17: nat.nptv6[0].inside: NPTv6 prefixes must be /64 or shorter, got /80 (RFC 6296 adjusts a 16-bit word after the prefix to keep checksums valid)
bad-nat-static.yaml	19:17: nat.nptv6[1].inside: overlaps nat.static[5].inside (2001:2:0:5::1/128)
bad-limits.yaml	6:13: limits.sessions: 100 sessions is out of range 1024-16777216 (flows per address family; each costs about 944 bytes of kernel memory)
bad-limits.yaml	7:3: limits.session: unknown key "session" (did you mean "sessions"?)
bad-multiple-errors.yaml	9:28: address-book.lan-net[1]: invalid IPv4 address "198.18.300.0"
bad-multiple-errors.yaml	15:9: policies[0].to: unknown zone "untrsut" (did you mean "untrust"?)
bad-multiple-errors.yaml	17:18: policies[0].application: unknown application "htp" (did you mean "http"?)
bad-multiple-errors.yaml	22:13: policies[1].action: invalid value "drop": expected permit, deny or reject
bad-multiple-errors.yaml	23:5: policies[1].comment: unknown key "comment"
TABLE
)

files=$(cut -f1 <<<"$table" | awk '!seen[$0]++')
nfiles=0
for f in $files; do
    nfiles=$((nfiles + 1))
    path="$data/$f"
    "$SLUICE" check -c "$path" >"$IT_TMP/out" 2>"$IT_TMP/err"
    rc=$?
    missing=()
    while IFS=$'\t' read -r _ want; do
        grep -qFx -- "$path:$want" "$IT_TMP/err" || missing+=("$path:$want")
    done < <(awk -F'\t' -v f="$f" '$1 == f' <<<"$table")
    nwant=$(awk -F'\t' -v f="$f" '$1 == f' <<<"$table" | wc -l)
    first=$(awk -F'\t' -v f="$f" '$1 == f { sub(/^[^\t]*\t/, ""); print; exit }' <<<"$table")
    if [ "$rc" -eq 1 ] && [ ${#missing[@]} -eq 0 ]; then
        it_pass "$f: exit 1, $nwant expected line(s), e.g. \"$first\""
    else
        it_fail "$f" "exit $rc; missing: ${missing[*]:-none}; stderr was: $(tr '\n' '|' <"$IT_TMP/err")"
    fi
done

it_log "checking generated bad files"
bad_inline() {  # bad_inline NAME CONTENT EXPECTED_AFTER_FILE
    local path="$IT_TMP/$1.yaml"
    printf '%s' "$2" >"$path"
    "$SLUICE" check -c "$path" >"$IT_TMP/out" 2>"$IT_TMP/err"
    local rc=$?
    if [ $rc -eq 1 ] && grep -qFx -- "$path:$3" "$IT_TMP/err"; then
        it_pass "$1: exit 1, \"$3\""
    else
        it_fail "$1" "exit $rc; wanted \"$path:$3\"; stderr was: $(tr '\n' '|' <"$IT_TMP/err")"
    fi
}
bad_inline empty "" "1:1: the file is empty (expected interfaces, zones and policies)"
bad_inline unknown-zone-in-policy 'interfaces: { lan0: { zone: trust } }
zones: { trust: {} }
policies:
  - { name: p, from: trust, to: dmz, action: permit }
' '4:33: policies[0].to: unknown zone "dmz"'

missing="$IT_TMP/does-not-exist.yaml"
"$SLUICE" check -c "$missing" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -qFx "$missing: cannot read config file: No such file or directory" "$IT_TMP/err"; then
    it_pass "missing file: exit 1, \"cannot read config file: No such file or directory\""
else
    it_fail "missing file" "exit $rc; stderr: $(tr '\n' '|' <"$IT_TMP/err")"
fi

it_log "checking a good file"
if "$SLUICE" check -c "$data/good-basic.yaml" >"$IT_TMP/out" 2>"$IT_TMP/err"; then
    it_pass "good-basic.yaml: exit 0 ($(head -n 1 "$IT_TMP/out"))"
else
    it_fail "good-basic.yaml: exit 0" "stderr: $(tr '\n' '|' <"$IT_TMP/err")"
fi
it_log "$nfiles bad files from tests/data/configs and 3 generated ones checked"
it_expect_ge "distinct bad configs rejected with the expected message" "$((IT_PASS - 1))" 15
it_finish
