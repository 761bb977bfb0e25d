#!/usr/bin/env bash
# `sluice reload` while punted traffic flows: a changed ruleset takes effect for
# new flows; open flows keep the ruleset they started with, partial-match
# state included. IPv4 and IPv6, TCP and UDP.
#
#   v1: r1 = { x-pat 'alpha[0-9]+omega' reject, z-pat 'charlie' alert }
#   v2: r1 = { y-pat 'bravo[0-9]+zulu' reject, z-pat 'charlie' reject }
#       (x removed, y added, z changed from alert to reject)
#   v3: v2 plus a new ruleset r2 = { w-pat 'whiskey' reject, fail-mode open }
#       written before r1 in the file, and a new policy tcp/8090 + udp/5354 ->
#       inspect r2
#
# TCP: connection A, opened under v1, sends "alpha123", the reload to v2 comes,
# then A sends "45omega": A is reset (its stream kept v1 and the partial
# match) and "45omega" never reaches the server. A2 (v1) passes y and z
# (alert in v1); new connections pass x and are reset on y and on z. After v3,
# A2 still carries v1 (x resets it), and its packets count for r1, not for the
# ruleset that now sits at r1's old position in the file; after
# `inspect stop`, the UDP flow D (r1, opened under v2) fails closed like r1,
# not open like r2.
# UDP (observed and asserted): the stage keeps one flow per 5-tuple and scans
# each datagram of it on its own, with the ruleset the flow started with: a
# flow opened under v1 still drops x and passes y after the reload; a new
# flow (another source port) drops y and z and passes x.
source "$(dirname "$0")/lib.sh"
it_init inspect_reload ir
it_need_root_and_bpf
it_topology_up

source "$IT_DIR/inspect_flows_lib.sh"

cfg="$IT_TMP/fw.yaml"
write_config() {  # write_config v1|v2|v3
    local v=$1
    it_write_topology_config "$cfg"
    cat >>"$cfg" <<'EOF'
applications:
  web: { protocol: tcp, destination-port: 8080 }
  dgram: { protocol: udp, destination-port: 5353 }
EOF
    [ "$v" = v3 ] && cat >>"$cfg" <<'EOF'
  alt: { protocol: tcp, destination-port: 8090 }
  alt-dgram: { protocol: udp, destination-port: 5354 }
EOF
    cat >>"$cfg" <<'EOF'
policies:
  - { name: inspect-web, from: trust, to: untrust, application: [web, dgram], action: { inspect: r1 } }
EOF
    [ "$v" = v3 ] && cat >>"$cfg" <<'EOF'
  - { name: inspect-alt, from: trust, to: untrust, application: [alt, alt-dgram], action: { inspect: r2 } }
EOF
    cat >>"$cfg" <<'EOF'
default-action: deny
inspect:
  rulesets:
EOF
    [ "$v" = v3 ] && cat >>"$cfg" <<'EOF'
    r2:
      fail-mode: open
      patterns:
        - { name: w-pat, regex: 'whiskey', direction: both, action: reject }
EOF
    if [ "$v" = v1 ]; then
        cat >>"$cfg" <<'EOF'
    r1:
      patterns:
        - { name: x-pat, regex: 'alpha[0-9]+omega', direction: client-to-server, action: reject }
        - { name: z-pat, regex: 'charlie', direction: client-to-server, action: alert }
EOF
    else
        cat >>"$cfg" <<'EOF'
    r1:
      patterns:
        - { name: y-pat, regex: 'bravo[0-9]+zulu', direction: client-to-server, action: reject }
        - { name: z-pat, regex: 'charlie', direction: client-to-server, action: reject }
EOF
    fi
}

write_config v1
it_sluice_start "$cfg"
for f in 4 6; do
    dst=$(wan_addr $f)
    flows_server "s$f" wan "$dst" 8080
    flows_server "alt$f" wan "$dst" 8090
    flows_udp_echo "u$f" wan "$dst" 5353
    flows_udp_echo "ualt$f" wan "$dst" 5354
done

it_log "v1: x-pat rejects, y passes, for new TCP and UDP flows"
for f in 4 6; do
    dst=$(wan_addr $f)
    it_expect_eq "IPv$f v1 new TCP: x (alpha1omega) is reset" reset "$(tcp_once "$dst" 8080 text:alpha1omega)"
    it_expect_eq "IPv$f v1 new TCP: y (bravo1zulu) passes" eof "$(tcp_once "$dst" 8080 text:bravo1zulu)"
    it_expect_eq "IPv$f v1 new UDP flow: clean datagram echoed, x dropped" "echoed timeout" \
        "$(udp_send "$dst" 5353 4100$f fill:40 text:alpha1omega)"
done

it_log "v1: opening A (x's first half sent), A2 (clean), UDP flow U (sport 4200N)"
for f in 4 6; do
    flows_client "A$f" "$(wan_addr $f)" 8080
    flows_client "A2$f" "$(wan_addr $f)" 8080
    pa=$(cport A$f); pa2=$(cport A2$f)
    if [ "$pa" = 0 ] || [ "$pa2" = 0 ]; then
        it_fail "IPv$f: A and A2 connect"
        continue
    fi
    fctl "A$f" send text:alpha123 >/dev/null
    it_check "IPv$f A: the first half of x (alpha123, 8 bytes) reaches the server" fok "s$f" wait "$pa" 8 5
    fctl "A2$f" send fill:100 >/dev/null
    it_check "IPv$f A2: 100 clean bytes reach the server" fok "s$f" wait "$pa2" 100 5
    it_expect_eq "IPv$f U: first datagram echoed" echoed "$(udp_send "$(wan_addr $f)" 5353 4200$f fill:30)"
done

it_log "reload to v2: x removed, y added, z changed alert -> reject"
write_config v2
if sluice_fw reload >"$IT_TMP/reload-v2.out" 2>&1; then
    it_pass "reload to v2 exits 0"
else
    it_fail "reload to v2 exits 0" "$(cat "$IT_TMP/reload-v2.out")"
fi
sluice_fw show inspect --json >"$IT_TMP/v2.json"
it_expect_eq "show inspect after v2: r1's patterns" '["y-pat", "z-pat"]' \
    "$("$IT_PY" -c 'import json,sys; print(json.dumps([p["name"] for r in json.load(open(sys.argv[1]))["rulesets"] if r["name"]=="r1" for p in r["patterns"]]))' "$IT_TMP/v2.json")"
it_expect_eq "show inspect after v2: z-pat's action" reject "$(insp "$IT_TMP/v2.json" r1 patterns.z-pat.action)"

for f in 4 6; do
    dst=$(wan_addr $f); pa=$(cport A$f); pa2=$(cport A2$f)
    it_log "IPv$f: open flows keep v1"
    fctl "A$f" send text:45omega >/dev/null
    st=$(fctl "A$f" state 3)
    it_expect_eq "IPv$f A (v1): the second half completes x -> A is reset" reset "$(word "$st" 2)"
    st=$(fctl "s$f" end "$pa" 5)
    it_expect_eq "IPv$f A: the server's leg ended by a reset" reset "$(word "$st" 2)"
    it_expect_eq "IPv$f A: the server got only the first half (8 bytes)" 8 "$(word "$st" 3)"
    it_expect_eq "IPv$f A: 'omega' never reached the server" 0 "$(grep -c omega "$IT_TMP/s$f.data/$pa.bin")"

    fctl "A2$f" send text:bravo777zulu >/dev/null
    it_check "IPv$f A2 (v1): y (not in v1) passes" fok "s$f" wait "$pa2" 112 5
    fctl "A2$f" send text:charlie >/dev/null
    it_check "IPv$f A2 (v1): z (alert in v1) passes" fok "s$f" wait "$pa2" 119 5
    st=$(fctl "A2$f" state 1)
    it_expect_eq "IPv$f A2 is still open" open "$(word "$st" 2)"

    it_log "IPv$f: new flows use v2"
    flows_client "B$f" "$dst" 8080
    pb=$(cport B$f)
    fctl "B$f" send text:alpha12345omega >/dev/null
    it_check "IPv$f B (v2): x (removed) passes" fok "s$f" wait "$pb" 15 5
    fctl "B$f" send text:bravo1zulu >/dev/null
    st=$(fctl "B$f" state 3)
    it_expect_eq "IPv$f B (v2): y (added) resets B" reset "$(word "$st" 2)"
    st=$(fctl "s$f" end "$pb" 5)
    it_expect_eq "IPv$f B: the server got x and not y (15 bytes)" "reset 15" "$(word "$st" 2) $(word "$st" 3)"
    it_expect_eq "IPv$f C (v2): z (now reject) is reset" reset "$(tcp_once "$dst" 8080 text:charlie)"

    it_log "IPv$f: UDP"
    it_expect_eq "IPv$f U (flow opened under v1): y echoed, x dropped, z echoed (alert in v1)" \
        "echoed timeout echoed" "$(udp_send "$dst" 5353 4200$f text:bravo9zulu text:alpha9omega text:charlie)"
    it_expect_eq "IPv$f U' (new flow under v2): x echoed, y dropped, z dropped" "echoed timeout timeout" \
        "$(udp_send "$dst" 5353 4300$f text:alpha9omega text:bravo9zulu text:charlie)"
done

sluice_fw show inspect --json >"$IT_TMP/after-v2.json"
# TCP: 2 (v1 sanity) + A x2 + B x2 + C x2 resets; alerts: A2 x2 (z under v1).
it_expect_eq "r1 resets: x (v1 sanity, A), y (B), z (C), each v4+v6" 8 "$(insp "$IT_TMP/after-v2.json" r1 stage.resets)"
it_expect_eq "r1 alerts: z on A2 (TCP) and on U (UDP), both under v1, v4+v6" 4 "$(insp "$IT_TMP/after-v2.json" r1 stage.alerts)"
# UDP: x dropped (v1 sanity, U after reload), y and z dropped on U'.
it_expect_eq "r1 drops (UDP datagrams): x v1-sanity, x on U, y and z on U', each v4+v6" 8 \
    "$(insp "$IT_TMP/after-v2.json" r1 stage.drops)"
# y: B (TCP) and U' (UDP); z: A2 (alert), C, U (alert), U' (drop).
it_expect_eq "y-pat matches: B and U', v4+v6" 4 "$(insp "$IT_TMP/after-v2.json" r1 patterns.y-pat.matches)"
it_expect_eq "z-pat matches: A2, C, U, U', v4+v6" 8 "$(insp "$IT_TMP/after-v2.json" r1 patterns.z-pat.matches)"

it_log "before v3: tcp/8090 and udp/5354 match no policy"
it_expect_eq "IPv4 tcp/8090 times out" timeout "$(probe lan "$WAN4" 8090 2)"
it_expect_eq "IPv6 udp/5354 times out" timeout "$(udp_send "$WAN6" 5354 44006 fill:10)"

it_log "opening UDP flow D (sport 4800N, r1 under v2, fail-mode closed) before v3"
for f in 4 6; do
    it_expect_eq "IPv$f D: first datagram echoed" echoed "$(udp_send "$(wan_addr $f)" 5353 4800$f fill:10)"
done

it_log "reload to v3: ruleset r2 (fail-mode open, before r1 in the file) and a policy for it"
write_config v3
if sluice_fw reload >"$IT_TMP/reload-v3.out" 2>&1; then
    it_pass "reload to v3 exits 0"
else
    it_fail "reload to v3 exits 0" "$(cat "$IT_TMP/reload-v3.out")"
fi
sluice_fw show inspect --json >"$IT_TMP/v3.json"
it_expect_eq "show inspect after v3 lists r2 with w-pat" reject "$(insp "$IT_TMP/v3.json" r2 patterns.w-pat.action)"
it_expect_eq "show inspect after v3 still lists r1" '["y-pat", "z-pat"]' \
    "$("$IT_PY" -c 'import json,sys; print(json.dumps([p["name"] for r in json.load(open(sys.argv[1]))["rulesets"] if r["name"]=="r1" for p in r["patterns"]]))' "$IT_TMP/v3.json")"
for f in 4 6; do
    dst=$(wan_addr $f)
    it_expect_eq "IPv$f new tcp/8090 (r2): clean passes" eof "$(tcp_once "$dst" 8090 fill:50)"
    it_expect_eq "IPv$f new tcp/8090 (r2): w (whiskey) is reset" reset "$(tcp_once "$dst" 8090 fill:5+text:whiskey)"
    it_expect_eq "IPv$f new udp/5354 (r2): clean echoed, w dropped" "echoed timeout" \
        "$(udp_send "$dst" 5354 4500$f fill:20 text:whiskey)"
    it_expect_eq "IPv$f new tcp/8080 (r1 v2): y is reset" reset "$(tcp_once "$dst" 8080 text:bravo2zulu)"
    it_expect_eq "IPv$f new tcp/8080 (r1 v2): w (r2's) passes" eof "$(tcp_once "$dst" 8080 text:whiskey)"
    it_expect_eq "IPv$f U (UDP flow from v1) still: y echoed, x dropped" "echoed timeout" \
        "$(udp_send "$dst" 5353 4200$f text:bravo3zulu text:alpha3omega)"
done

it_log "A2 (opened under v1) after two reloads"
sluice_fw show inspect --json >"$IT_TMP/v3-before-a2.json"
for f in 4 6; do
    pa2=$(cport A2$f)
    fctl "A2$f" send fill:1000 >/dev/null
    it_check "IPv$f A2: 1000 more clean bytes pass" fok "s$f" wait "$pa2" 1119 5
done
sluice_fw show inspect --json >"$IT_TMP/v3-after-a2.json"
d1=$(( $(insp "$IT_TMP/v3-after-a2.json" r1 fast_path.punted_packets) - $(insp "$IT_TMP/v3-before-a2.json" r1 fast_path.punted_packets) ))
d2=$(( $(insp "$IT_TMP/v3-after-a2.json" r2 fast_path.punted_packets) - $(insp "$IT_TMP/v3-before-a2.json" r2 fast_path.punted_packets) ))
it_expect_ge "A2's packets count in r1's fast_path.punted_packets (delta)" "$d1" 2
it_expect_eq "A2's packets do not count for r2, which now has r1's old place in the file (delta)" 0 "$d2"
for f in 4 6; do
    pa2=$(cport A2$f)
    fctl "A2$f" send text:alpha7omega >/dev/null
    st=$(fctl "A2$f" state 3)
    it_expect_eq "IPv$f A2 still scans with v1: x resets it" reset "$(word "$st" 2)"
    it_expect_eq "IPv$f A2: 'omega' never reached the server" 0 "$(grep -c omega "$IT_TMP/s$f.data/$pa2.bin")"
done

it_log "inspect stop: D (r1, fail-mode closed) must fail closed, whatever ruleset now has r1's old place"
sluice_fw show inspect --json >"$IT_TMP/pre-stop.json"
if sluice_fw inspect stop >"$IT_TMP/stop.out" 2>&1; then
    it_pass "sluice inspect stop exits 0"
else
    it_fail "sluice inspect stop exits 0" "$(cat "$IT_TMP/stop.out")"
fi
for f in 4 6; do
    it_expect_eq "IPv$f D (r1) with the stage stopped: its datagram is dropped" timeout \
        "$(udp_send "$(wan_addr $f)" 5353 4800$f fill:10)"
done
sluice_fw show inspect --json >"$IT_TMP/post-stop.json"
it_expect_ge "r1 fast_path.fail_closed_packets grew (D's datagrams; delta)" \
    $(( $(insp "$IT_TMP/post-stop.json" r1 fast_path.fail_closed_packets) - $(insp "$IT_TMP/pre-stop.json" r1 fast_path.fail_closed_packets) )) 2
it_expect_eq "r2 (fail-mode open) fast_path.fail_open_packets did not grow (delta)" 0 \
    $(( $(insp "$IT_TMP/post-stop.json" r2 fast_path.fail_open_packets) - $(insp "$IT_TMP/pre-stop.json" r2 fast_path.fail_open_packets) ))
it_check "daemon still running" kill -0 "$SLUICE_PID"
it_finish
