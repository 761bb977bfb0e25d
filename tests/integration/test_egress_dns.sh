#!/usr/bin/env bash
# Egress by name (docs/egress.md), IPv4 and IPv6, against a local
# authoritative DNS server (dnsmasq) and HTTPS servers in the WAN namespace:
#   - an allowed name resolves (through sluice's DNS proxy: the client asks
#     its own resolver, the datapath steers the query) and connects;
#   - a denied name gets NXDOMAIN, and its server's address, never learned,
#     cannot be reached;
#   - an allowed server's address used directly, never resolved, is blocked;
#     once resolved, it works;
#   - a wildcard deny with an allow of one of its hosts admits only that host,
#     and the reverse (a wildcard allow with a deny of one host);
#   - a CNAME to a denied name is denied;
#   - the first upstream is dead: queries fail over to the second without a
#     stall;
#   - a learned address expires: new connections to it are dropped
#     (drop-egress-not-learned), an established one goes on;
#   - verify-sni: a TLS connection to an allowed (learned) address asking
#     for a denied name, or for none, is reset by the inspection stage; the
#     allowed name goes through and is handed back to the fast path;
#   - DNS over TLS (853) from a governed source is dropped;
#   - queries over TCP are steered and answered the same way;
#   - rules added, deleted (twice: idempotent) and refused at run time.
source "$(dirname "$0")/lib.sh"
it_init egress_dns eg
it_need_root_and_bpf
for tool in dnsmasq drill curl openssl; do
    command -v "$tool" >/dev/null || it_skip "needs $tool (scripts/setup.sh installs it)"
done
it_topology_up

# One server address per name, both families.
for i in 201 202 203 204 205 206; do
    wan ip addr add "198.18.100.$i/24" dev eth0
    wan ip addr add "2001:2:0:100::$i/64" dev eth0 nodad
done
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench.test \
    -keyout "$IT_TMP/key.pem" -out "$IT_TMP/cert.pem" >/dev/null 2>&1 || it_fail "openssl made no certificate"
it_bg https ip netns exec "$P-wan" "$IT_PY" "$IT_DIR/https_server.py" "$IT_TMP/cert.pem" "$IT_TMP/key.pem" 443
it_wait_for "HTTPS server" 50 grep -q listening "$IT_TMP/https.log" || it_fail "the HTTPS server did not start"
# The authoritative server: every name below test. is its own (NXDOMAIN for
# the ones it does not have). Records live 300 s; the policy clamps to 4 s.
it_bg dns ip netns exec "$P-wan" dnsmasq --no-daemon --conf-file=/dev/null --pid-file= --user=root \
    --no-resolv --no-hosts --bind-interfaces --listen-address=198.18.100.200 --listen-address=2001:2:0:100::200 \
    --local=/test/ --local-ttl=300 --log-queries --log-facility=- \
    --host-record=allowed.bench.test,198.18.100.201,2001:2:0:100::201 \
    --host-record=other.bench.test,198.18.100.202,2001:2:0:100::202 \
    --host-record=one.blocked.test,198.18.100.203,2001:2:0:100::203 \
    --host-record=two.blocked.test,198.18.100.204,2001:2:0:100::204 \
    --host-record=short.open.test,198.18.100.205,2001:2:0:100::205 \
    --host-record=bad.open.test,198.18.100.206,2001:2:0:100::206 \
    --cname=alias.open.test,other.bench.test

it_server wan accept-server :: 8089  # new connections after the expiry
it_write_topology_config "$IT_TMP/fw.yaml"
cat >>"$IT_TMP/fw.yaml" <<'YAML'
applications:
  web: { protocol: tcp, destination-port: [443, 853, 8080-8089] }
policies:
  - { name: lan-out, from: trust, to: untrust, application: [web], action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
egress:
  # The first upstream does not exist (nothing answers ARP for it).
  upstreams: [198.18.100.250, 198.18.100.200]
  learned-ttl: { minimum: 1s, maximum: 4s, grace: 0s }
  scopes:
    lan:
      from: trust
      verify-sni: true
      rules:
        - { action: deny, name: "*.bench.test" }
        - { action: allow, name: allowed.bench.test, destination-port: [443] }
        - { action: deny, name: bad.open.test }
        - { action: allow, name: "*.open.test" }
        - { action: allow, name: two.blocked.test }
        - { action: deny, name: "*.blocked.test" }
YAML
it_sluice_start "$IT_TMP/fw.yaml"

# resolve FAMILY NAME: "RCODE ADDRESS..." as the LAN host's resolver (the WAN
# DNS server's address) answers it through the firewall.
resolve() {
    local fam=$1 name=$2 server=$WAN4 type=A
    [ "$fam" = 6 ] && server=$WAN6 && type=AAAA
    lan drill ${RESOLVE_TCP:+-t} -"$fam" "$name" @"$server" "$type" 2>&1 | awk '
        /rcode:/ { for (i = 1; i <= NF; i++) if ($i == "rcode:") { rc = $(i + 1); sub(",", "", rc) } }
        /^;; ANSWER SECTION/ { answer = 1; next }
        /^;; / { answer = 0 }
        answer && ($4 == "A" || $4 == "AAAA") { addrs = addrs " " $5 }
        END { print (rc == "" ? "NO-ANSWER" : rc) addrs }'
}
# https FAMILY NAME ADDRESS: the HTTPS server's answer line, or "failed".
https() {
    local host=$3
    [ "$1" = 6 ] && host="[$3]"
    lan curl -sk --max-time 3 --resolve "$2:443:$host" "https://$2/" 2>/dev/null || echo failed
}
# https_rc FAMILY SNI ADDRESS: curl's exit code for a TLS connection to
# ADDRESS asking for SNI (0 done, 28 timed out, 35/56 reset in the handshake).
https_rc() {
    local host=$3
    [ "$1" = 6 ] && host="[$3]"
    if [ "$2" = "$3" ]; then  # an address: curl sends no SNI
        lan curl -sk --max-time 3 "https://$host/" >/dev/null 2>&1
    else
        lan curl -sk --max-time 3 --resolve "$2:443:$host" "https://$2/" >/dev/null 2>&1
    fi
    echo $?
}
reset_rc() { [ "$1" = 35 ] || [ "$1" = 56 ]; }
stat() { sluice_fw show stats --json >"$IT_TMP/stats.json" && stat_value "$IT_TMP/stats.json" "$1"; }

for fam in 4 6; do
    v="IPv$fam"
    if [ "$fam" = 4 ]; then a() { echo "198.18.100.$1"; }; else a() { echo "2001:2:0:100::$1"; }; fi

    # --- the failover first: the dead upstream costs one timeout, once --------
    start=$(date +%s%N)
    got=$(resolve $fam allowed.bench.test)
    ms=$((($(date +%s%N) - start) / 1000000))
    it_expect_eq "$v: allowed.bench.test resolves through the proxy" "NOERROR $(a 201)" "$got"
    # A stall would be drill's own retry (5 s) or glibc's; the proxy's budget is 2 x 400 ms.
    it_check "$v: the lookup did not stall on the dead upstream (${ms} ms)" test "$ms" -lt 3000
    it_expect_eq "$v: the same over TCP" "NOERROR $(a 201)" "$(RESOLVE_TCP=1 resolve $fam allowed.bench.test)"
    it_expect_eq "$v: a denied name over TCP" NXDOMAIN "$(RESOLVE_TCP=1 resolve $fam other.bench.test)"

    # --- an address used directly, never resolved, is blocked; then it works --
    if [ "$fam" = 4 ]; then
        it_check "$v: two.blocked.test's address, never resolved, is blocked" \
            test "$(probe lan "$(a 204)" 443 2)" = timeout
    fi
    it_expect_eq "$v: the allowed name connects over HTTPS" "sluice-egress-test $(a 201)" \
        "$(https $fam allowed.bench.test "$(a 201)")"
    it_check "$v: its learned port only: 8080 on the same address is dropped" \
        test "$(probe lan "$(a 201)" 8080 2)" = timeout
    # verify-sni: the learned address with a name the scope denies is reset
    # by the inspection stage after the ClientHello; so is one without SNI.
    # (Resolved again first: the 4 s the policy keeps it may have passed.)
    resolve $fam allowed.bench.test >/dev/null
    rc=$(https_rc $fam other.bench.test "$(a 201)")
    it_check "$v: verify-sni: the allowed address asked for a denied name is reset (curl rc $rc)" reset_rc "$rc"
    rc=$(https_rc $fam "$(a 201)" "$(a 201)")
    it_check "$v: verify-sni: ... and asked for no name (an address) too (curl rc $rc)" reset_rc "$rc"
    it_expect_eq "$v: verify-sni: the allowed name on it still connects" "sluice-egress-test $(a 201)" \
        "$(https $fam allowed.bench.test "$(a 201)")"

    # --- denied names: NXDOMAIN, nothing learned, no connection ---------------
    it_expect_eq "$v: other.bench.test (wildcard deny) gets NXDOMAIN" NXDOMAIN "$(resolve $fam other.bench.test)"
    it_expect_eq "$v: its server stays unreachable" failed "$(https $fam other.bench.test "$(a 202)")"
    it_expect_eq "$v: one.blocked.test (wildcard deny) gets NXDOMAIN" NXDOMAIN "$(resolve $fam one.blocked.test)"
    it_expect_eq "$v: bad.open.test (a deny inside a wildcard allow) gets NXDOMAIN" NXDOMAIN \
        "$(resolve $fam bad.open.test)"
    it_expect_eq "$v: alias.open.test, a CNAME to a denied name, gets NXDOMAIN" NXDOMAIN \
        "$(resolve $fam alias.open.test)"

    # --- the one allowed host under a wildcard deny ---------------------------
    it_expect_eq "$v: two.blocked.test (allowed under *.blocked.test) resolves" "NOERROR $(a 204)" \
        "$(resolve $fam two.blocked.test)"
    it_expect_eq "$v: and connects" "sluice-egress-test $(a 204)" "$(https $fam two.blocked.test "$(a 204)")"

    # --- expiry: established goes on, new is dropped --------------------------
    it_server wan echo-server :: $((8080 + fam))  # one connection each
    it_expect_eq "$v: short.open.test resolves" "NOERROR $(a 205)" "$(resolve $fam short.open.test)"
    chat_open "est$fam" "$(a 205)" $((8080 + fam)) || it_fail "$v: no connection to short.open.test right after resolving it"
    chat_exchange "est$fam" 3 100 || it_fail "$v: the fresh connection does not carry data"
    drops0=$(stat drop-egress-not-learned)
    sleep 5  # past the 4 s clamp (grace 0)
    it_check "$v: after the learned address expired, a new connection is dropped" \
        test "$(probe lan "$(a 205)" 8089 2)" = timeout
    it_check "$v: ... and counted (drop-egress-not-learned)" test "$(stat drop-egress-not-learned)" -gt "$drops0"
    it_check "$v: the established connection goes on" chat_exchange "est$fam" 3 100
    it_expect_eq "$v: resolved again, new connections pass" connected \
        "$(resolve $fam short.open.test >/dev/null; probe lan "$(a 205)" 8089 2)"

    # --- DNS over TLS ----------------------------------------------------------
    dot0=$(stat drop-egress-dns-over-tls)
    probe lan "$(a 201)" 853 1 >/dev/null
    it_check "$v: DNS over TLS (853) is dropped and counted" test "$(stat drop-egress-dns-over-tls)" -gt "$dot0"
done

# --- rule changes without a reload --------------------------------------------
rule='{ action: allow, name: other.bench.test }'
it_check "egress add: a rule for one host under the wildcard deny" sluice_fw egress add lan "$rule"
it_expect_eq "other.bench.test now resolves" "NOERROR 198.18.100.202" "$(resolve 4 other.bench.test)"
it_expect_eq "and connects" "sluice-egress-test 198.18.100.202" "$(https 4 other.bench.test 198.18.100.202)"
it_check "egress delete removes it" sluice_fw egress delete lan "$rule"
sluice_fw egress delete lan "$rule" >"$IT_TMP/egress.out" 2>&1
it_check "deleting it again is not an error" grep -q 'nothing to delete' "$IT_TMP/egress.out"
it_expect_eq "other.bench.test is denied again" NXDOMAIN "$(resolve 4 other.bench.test)"
refused() { ! sluice_fw egress "$@" >"$IT_TMP/egress.out" 2>&1; }
it_check "a rule with a mistake is refused" refused add lan '{ action: allow, name: "*" }'
it_check "... with a message naming the field" grep -q 'egress.scopes.lan.rules\[[0-9]*\].name' "$IT_TMP/egress.out"
it_check "replace: a rule number past the end is refused" refused replace lan 99 "$rule"
it_check "an unknown scope is refused" refused add nosuch "$rule"
it_expect_eq "the scope kept its 6 rules" 6 \
    "$(sluice_fw show egress --json | "$IT_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["scopes"][0]["rules"]))')"

sluice_fw show egress --json >"$IT_TMP/egress.json"
it_check "show egress --json: the proxy counted denied queries" \
    "$IT_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["dns"]["denied"] >= 8 and d["dns"]["upstream_errors"] >= 1 else 1)' "$IT_TMP/egress.json"
it_check "show egress prints the scope" sh -c "'$SLUICE' --netns '$P-fw' show egress | grep -q 'scope lan'"
it_finish
