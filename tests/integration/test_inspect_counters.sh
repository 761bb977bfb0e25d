#!/usr/bin/env bash
# The inspection counters (`sluice show inspect --json`) match the traffic
# sent. IPv4 and IPv6 (the expected numbers are per family, times 2).
#
#   cnt    tcp/8080 (answers 3000 bytes after the client's EOF), tcp/8082
#          (answers 20 bytes + "serverflag"): rej 'rejectme' c2s reject, drp
#          'dropme' c2s drop, alt 'alertme' c2s alert, srv 'serverflag' s2c reject.
#          Per family: 5 clean connections (1, 100, 2000, 70000, 300000 bytes),
#          one each with alertme, rejectme, dropme, and one answered serverflag:
#          connections 9, bytes each way the exact sums, per-pattern matches 1,
#          resets 2, drops 1, alerts 1.
#   twoway tcp/8083 (answers "alertme"): alt 'alertme' both alert, rej
#          'rejectme' c2s reject. A connection with alertme in both directions
#          is one flow with the pattern: alt matches 1, alerts 1, matches 1;
#          one with alertme and, in a later read, rejectme is one flow with a
#          match: matches 1, alt 1, rej 1, resets 1.
#   lim    tcp/8081, inspect-bytes 1000: the stage scans up to the first read
#          past the limit (600+600 bytes client->server, 700+700
#          server->client, each write read on its own), offloaded 1 per direction,
#          'limitme' after the limit passes; once both directions are past it
#          the connection is handed to the fast path (handoffs 1): 200 kB /
#          300 kB more each way arrive byte-exact, counted by the session and
#          tcp-spliced-after-inspection, not by the stage or punted_packets.
#   ucnt   udp/5353 (the server answers 64 clean bytes): 'udpbad' drop,
#          'udpnote' alert: datagrams == datagrams scanned, both directions.
#   uc2s   udp/5355 (echo): a client-to-server pattern only: the answers are
#          still counted (datagrams 12, bytes_server_to_client 300).
#   ulim   udp/5354 (echo), inspect-bytes 300: after 3 x 100 bytes each
#          direction is offloaded (offloaded 2); later datagrams are forwarded
#          by XDP: the session's packets and `forward` grow, the stage's
#          datagrams and the ruleset's punted_packets do not.
source "$(dirname "$0")/lib.sh"
it_init inspect_counters ic
it_need_root_and_bpf
it_topology_up

source "$IT_DIR/inspect_flows_lib.sh"

# tcp_full ADDR PORT [--gap S] SPEC...: like tcp_once, the whole line (STATE SENT RECEIVED SHA).
tcp_full() {
    local addr=$1 port=$2 a=() s
    shift 2
    while [ $# -gt 0 ]; do
        if [ "$1" = --gap ]; then a+=(--gap "$2"); shift 2; continue; fi
        a+=(--send "$1"); shift
    done
    lan "$IT_PY" "$FLOWS" tcp --host "$addr" --port "$port" --timeout 3 "${a[@]}"
}

cfg="$IT_TMP/fw.yaml"
it_write_topology_config "$cfg"
cat >>"$cfg" <<'EOF'
applications:
  cnt-tcp: { protocol: tcp, destination-port: [8080, 8082] }
  lim-tcp: { protocol: tcp, destination-port: 8081 }
  twoway-tcp: { protocol: tcp, destination-port: 8083 }
  ucnt-udp: { protocol: udp, destination-port: 5353 }
  ulim-udp: { protocol: udp, destination-port: 5354 }
  uc2s-udp: { protocol: udp, destination-port: 5355 }
policies:
  - { name: p-cnt, from: trust, to: untrust, application: [cnt-tcp], action: { inspect: cnt } }
  - { name: p-lim, from: trust, to: untrust, application: [lim-tcp], action: { inspect: lim } }
  - { name: p-twoway, from: trust, to: untrust, application: [twoway-tcp], action: { inspect: twoway } }
  - { name: p-ucnt, from: trust, to: untrust, application: [ucnt-udp], action: { inspect: ucnt } }
  - { name: p-ulim, from: trust, to: untrust, application: [ulim-udp], action: { inspect: ulim } }
  - { name: p-uc2s, from: trust, to: untrust, application: [uc2s-udp], action: { inspect: uc2s } }
default-action: deny
inspect:
  rulesets:
    cnt:
      patterns:
        - { name: rej, regex: 'rejectme', direction: client-to-server, action: reject }
        - { name: drp, regex: 'dropme', direction: client-to-server, action: drop }
        - { name: alt, regex: 'alertme', direction: client-to-server, action: alert }
        - { name: srv, regex: 'serverflag', direction: server-to-client, action: reject }
    twoway:
      patterns:
        - { name: alt, regex: 'alertme', direction: both, action: alert }
        - { name: rej, regex: 'rejectme', direction: client-to-server, action: reject }
    lim:
      inspect-bytes: 1000
      patterns:
        - { name: lim, regex: 'limitme', direction: both, action: reject }
    ucnt:
      patterns:
        - { name: bad, regex: 'udpbad', direction: both, action: drop }
        - { name: note, regex: 'udpnote', direction: both, action: alert }
    ulim:
      inspect-bytes: 300
      patterns:
        - { name: lim, regex: 'limitme', direction: both, action: drop }
    uc2s:
      patterns:
        - { name: bad, regex: 'udpbad', direction: client-to-server, action: drop }
EOF
it_sluice_start "$cfg"
for f in 4 6; do
    dst=$(wan_addr $f)
    flows_server "a$f" wan "$dst" 8080 --answer fill:3000
    flows_server "srv$f" wan "$dst" 8082 --answer fill:20+text:serverflag
    flows_server "tw$f" wan "$dst" 8083 --answer text:alertme
    flows_server "lim$f" wan "$dst" 8081
    flows_udp_echo "ucnt$f" wan "$dst" 5353 --reply fill:64
    flows_udp_echo "ulim$f" wan "$dst" 5354
    flows_udp_echo "uc2s$f" wan "$dst" 5355
done
snap start

it_log "TCP (cnt): 5 clean connections, alert, reject, drop, server-side reject; per family"
SIZES="1 100 2000 70000 300000"
for f in 4 6; do
    dst=$(wan_addr $f)
    for n in $SIZES; do
        out=$(tcp_full "$dst" 8080 "fill:$n")
        it_expect_eq "IPv$f clean $n bytes: answered 3000 bytes, ended by EOF" "eof $n 3000" "$(echo "$out" | awk '{print $1, $2, $3}')"
    done
    out=$(tcp_full "$dst" 8080 fill:500+text:alertme+fill:500)
    it_expect_eq "IPv$f alertme (alert): passes, answered" "eof 1007 3000" "$(echo "$out" | awk '{print $1, $2, $3}')"
    out=$(tcp_full "$dst" 8080 --gap 0.3 fill:100 text:rejectme)
    it_expect_eq "IPv$f rejectme (reject): reset" reset "$(word "$out" 1)"
    out=$(tcp_full "$dst" 8080 --gap 0.3 fill:100 text:dropme)
    it_expect_eq "IPv$f dropme (drop): silence (no answer, no reset)" "timeout 0" "$(echo "$out" | awk '{print $1, $3}')"
    out=$(tcp_full "$dst" 8082 fill:50)
    it_expect_eq "IPv$f serverflag in the answer (s2c reject): reset, nothing of the answer delivered" "reset 0" \
        "$(echo "$out" | awk '{print $1, $3}')"
done
snap tcp
c2s=0
for n in $SIZES; do c2s=$((c2s + n)); done
c2s=$((c2s + 1007 + 108 + 106 + 50))
s2c=$((5 * 3000 + 3000 + 30))
it_expect_eq "cnt connections (9 per family)" 18 "$(idelta start tcp cnt stage.connections)"
it_expect_eq "cnt bytes_client_to_server (2 x $c2s)" $((2 * c2s)) "$(idelta start tcp cnt stage.bytes_client_to_server)"
it_expect_eq "cnt bytes_server_to_client (2 x $s2c)" $((2 * s2c)) "$(idelta start tcp cnt stage.bytes_server_to_client)"
for p in rej drp alt srv; do
    it_expect_eq "cnt pattern $p matches (one flow per family)" 2 "$(idelta start tcp cnt patterns.$p.matches)"
done
it_expect_eq "cnt matches (flows with a match)" 8 "$(idelta start tcp cnt stage.matches)"
it_expect_eq "cnt resets (rejectme, serverflag)" 4 "$(idelta start tcp cnt stage.resets)"
it_expect_eq "cnt drops (dropme)" 2 "$(idelta start tcp cnt stage.drops)"
it_expect_eq "cnt alerts (alertme)" 2 "$(idelta start tcp cnt stage.alerts)"
it_expect_eq "cnt offloaded (no inspect-bytes)" 0 "$(idelta start tcp cnt stage.offloaded)"
it_expect_eq "cnt stage_errors" 0 "$(idelta start tcp cnt stage.stage_errors)"
it_expect_eq "cnt datagrams (TCP only)" 0 "$(idelta start tcp cnt stage.datagrams)"
it_expect_ge "cnt fast_path.verdict_drop_packets (the dropped flows' later packets)" \
    "$(idelta start tcp cnt fast_path.verdict_drop_packets)" 2
it_expect_ge "drop-session-verdict grew" "$(sdelta start tcp drop-session-verdict)" 2

it_log "TCP (twoway): alertme in both directions of one connection, per family"
for f in 4 6; do
    dst=$(wan_addr $f)
    out=$(tcp_full "$dst" 8083 text:alertme)
    it_expect_eq "IPv$f alertme both ways (alert): passes" "eof 7 7" "$(echo "$out" | awk '{print $1, $2, $3}')"
done
snap twoway
it_expect_eq "twoway connections" 2 "$(idelta tcp twoway twoway stage.connections)"
it_expect_eq "twoway pattern alt matches == flows that contained it" 2 "$(idelta tcp twoway twoway patterns.alt.matches)"
it_expect_eq "twoway alerts == flows with an alert" 2 "$(idelta tcp twoway twoway stage.alerts)"
it_expect_eq "twoway matches == flows with a match" 2 "$(idelta tcp twoway twoway stage.matches)"

it_log "TCP (twoway): alertme, then (a later read) rejectme on one connection, per family"
for f in 4 6; do
    dst=$(wan_addr $f)
    it_expect_eq "IPv$f alertme then rejectme: reset" reset "$(word "$(tcp_full "$dst" 8083 --gap 0.3 text:alertme text:rejectme)" 1)"
done
snap twoway2
it_expect_eq "twoway: one flow with two patterns is one flow with a match (matches)" 2 \
    "$(idelta twoway twoway2 twoway stage.matches)"
it_expect_eq "twoway: pattern alt matches" 2 "$(idelta twoway twoway2 twoway patterns.alt.matches)"
it_expect_eq "twoway: pattern rej matches" 2 "$(idelta twoway twoway2 twoway patterns.rej.matches)"
it_expect_eq "twoway: resets" 2 "$(idelta twoway twoway2 twoway stage.resets)"

it_log "TCP (lim, inspect-bytes 1000): scanned up to the limit each way, then handed to the fast path"
# handed LABEL: waits (up to 5 s) until lim's handoffs counter is 1 past LABEL's.
handed() {
    local i
    for i in $(seq 50); do
        snap handed-poll
        [ "$(idelta "$1" handed-poll lim stage.handoffs)" -ge 1 ] && return 0
        sleep 0.1
    done
    return 1
}
for f in 4 6; do
    dst=$(wan_addr $f)
    src=$(lan_addr $f)
    snap "lim$f-0"
    flows_client "L$f" "$dst" 8081
    pl=$(cport L$f)
    fok "L$f" send fill:600
    it_check "IPv$f lim: 600 bytes through" fok "lim$f" wait "$pl" 600 5
    fok "L$f" send fill:600
    it_check "IPv$f lim: 1200 bytes through" fok "lim$f" wait "$pl" 1200 5
    snap "lim$f-1"
    it_expect_eq "IPv$f lim: client->server offloaded at the read that passed 1000" 1 \
        "$(idelta "lim$f-0" "lim$f-1" lim stage.offloaded)"
    it_expect_eq "IPv$f lim: bytes_client_to_server scanned (600 + 600)" 1200 \
        "$(idelta "lim$f-0" "lim$f-1" lim stage.bytes_client_to_server)"
    it_expect_eq "IPv$f lim: not handed off while server->client still needs scanning" 0 \
        "$(idelta "lim$f-0" "lim$f-1" lim stage.handoffs)"
    fok "L$f" send fill:600+text:limitme
    it_check "IPv$f lim: limitme after the limit reaches the server" fok "lim$f" wait "$pl" 1807 5
    for spec in fill:700 fill:700; do
        fok "lim$f" send "$pl" "$spec"
        it_check "IPv$f lim: server -> client $spec delivered" fok "L$f" expect "$spec" 5
    done
    it_check "IPv$f lim: both directions past 1000 bytes: the connection is handed to the fast path" handed "lim$f-1"
    snap "lim$f-2"
    sluice_fw show sessions --json >"$IT_TMP/lim$f-2.sess"
    it_expect_eq "IPv$f lim: bytes_server_to_client scanned (700 + 700)" 1400 \
        "$(idelta "lim$f-1" "lim$f-2" lim stage.bytes_server_to_client)"
    it_expect_eq "IPv$f lim: offloaded once per direction" 2 "$(idelta "lim$f-0" "lim$f-2" lim stage.offloaded)"
    it_expect_eq "IPv$f lim: handoff_refused" 0 "$(idelta "lim$f-0" "lim$f-2" lim stage.handoff_refused)"
    it_expect_eq "IPv$f lim: show sessions says the flow was handed back" handed-back \
        "$(session_field "$IT_TMP/lim$f-2.sess" tcp "$src" "$pl" "$dst" 8081 inspection)"

    # From here on the fast path carries the connection; the stage sees nothing.
    fok "lim$f" send "$pl" text:limitme
    it_check "IPv$f lim: server -> client limitme delivered by the fast path" fok "L$f" expect text:limitme 5
    fok "L$f" send fill:200000
    it_check "IPv$f lim: 200000 more bytes client -> server" fok "lim$f" wait "$pl" 201807 10
    fok "lim$f" send "$pl" fill:300000
    it_check "IPv$f lim: 300000 more bytes server -> client, byte-exact" fok "L$f" expect fill:300000 10
    snap "lim$f-3"
    sluice_fw show sessions --json >"$IT_TMP/lim$f-3.sess"
    for c in bytes_client_to_server bytes_server_to_client connections offloaded handoffs; do
        it_expect_eq "IPv$f lim: stage $c did not move after the hand-off" 0 \
            "$(idelta "lim$f-2" "lim$f-3" lim stage.$c)"
    done
    it_expect_eq "IPv$f lim: no packet punted after the hand-off" 0 \
        "$(idelta "lim$f-2" "lim$f-3" lim fast_path.punted_packets)"
    it_expect_ge "IPv$f lim: XDP renumbered the later segments (tcp-spliced-after-inspection)" \
        "$(sdelta "lim$f-2" "lim$f-3" tcp-spliced-after-inspection)" 10
    read -r pf2 pr2 <<<"$(session_field "$IT_TMP/lim$f-2.sess" tcp "$src" "$pl" "$dst" 8081 packets_forward packets_reply)"
    read -r pf3 pr3 <<<"$(session_field "$IT_TMP/lim$f-3.sess" tcp "$src" "$pl" "$dst" 8081 packets_forward packets_reply)"
    it_expect_ge "IPv$f lim: the session counted the later client packets" "$((${pf3:-0} - ${pf2:-0}))" 10
    it_expect_ge "IPv$f lim: the session counted the later server packets" "$((${pr3:-0} - ${pr2:-0}))" 10
    it_expect_eq "IPv$f lim: limitme after the limit matched nothing" 0 \
        "$(idelta "lim$f-0" "lim$f-3" lim patterns.lim.matches)"
    it_expect_eq "IPv$f lim: one connection" 1 "$(idelta "lim$f-0" "lim$f-3" lim stage.connections)"
    fok "L$f" shutdown
    st=$(fctl "L$f" state 5)
    it_expect_eq "IPv$f lim: the connection ends by EOF" eof "$(word "$st" 2)"
    st=$(fctl "lim$f" end "$pl" 5)
    it_expect_eq "IPv$f lim: the server got every byte, in order, then EOF" \
        "eof 201807 $(spec_sha fill:600 fill:600 fill:600+text:limitme fill:200000)" \
        "$(word "$st" 2) $(word "$st" 3) $(word "$st" 4)"
done

it_log "UDP (ucnt): 5 clean datagrams, udpbad, udpnote; the server answers 64 bytes"
snap u0
for f in 4 6; do
    dst=$(wan_addr $f)
    it_expect_eq "IPv$f ucnt: clean answered, udpbad dropped, udpnote answered" \
        "answered answered answered answered answered timeout answered" \
        "$(udp_send "$dst" 5353 4710$f fill:10 fill:100 fill:500 fill:1000 fill:1400 fill:20+text:udpbad fill:20+text:udpnote)"
done
snap u1
it_expect_eq "ucnt datagrams (7 sent + 6 answers, per family)" 26 "$(idelta u0 u1 ucnt stage.datagrams)"
it_expect_eq "ucnt bytes_client_to_server (3010 + 26 + 27 per family)" $((2 * 3063)) \
    "$(idelta u0 u1 ucnt stage.bytes_client_to_server)"
it_expect_eq "ucnt bytes_server_to_client (6 x 64 per family)" $((2 * 384)) \
    "$(idelta u0 u1 ucnt stage.bytes_server_to_client)"
it_expect_eq "ucnt pattern bad matches" 2 "$(idelta u0 u1 ucnt patterns.bad.matches)"
it_expect_eq "ucnt pattern note matches" 2 "$(idelta u0 u1 ucnt patterns.note.matches)"
it_expect_eq "ucnt matches" 4 "$(idelta u0 u1 ucnt stage.matches)"
it_expect_eq "ucnt drops" 2 "$(idelta u0 u1 ucnt stage.drops)"
it_expect_eq "ucnt alerts" 2 "$(idelta u0 u1 ucnt stage.alerts)"
it_expect_eq "ucnt resets" 0 "$(idelta u0 u1 ucnt stage.resets)"
it_expect_eq "ucnt connections (UDP only)" 0 "$(idelta u0 u1 ucnt stage.connections)"
it_expect_eq "ucnt: the server got the 6 datagrams that passed (IPv4 IPv6)" "6 6" \
    "$(grep -c '^dgram 47104 ' "$IT_TMP/ucnt4.ev") $(grep -c '^dgram 47106 ' "$IT_TMP/ucnt6.ev")"

it_log "UDP (uc2s): only a client-to-server pattern; 3 echoed datagrams per family"
for f in 4 6; do
    dst=$(wan_addr $f)
    it_expect_eq "IPv$f uc2s: 3 x 50 bytes echoed" "echoed echoed echoed" \
        "$(udp_send "$dst" 5355 4720$f fill:50 fill:50 fill:50)"
done
snap u2
it_expect_eq "uc2s bytes_client_to_server (6 x 50)" 300 "$(idelta u1 u2 uc2s stage.bytes_client_to_server)"
# The answers carry no pattern and the ruleset has none for their direction:
# the stage still counts every datagram it relays, and its bytes.
it_expect_eq "uc2s datagrams: the 6 sent and the 6 answers" 12 "$(idelta u1 u2 uc2s stage.datagrams)"
it_expect_eq "uc2s bytes_server_to_client (6 x 50)" 300 "$(idelta u1 u2 uc2s stage.bytes_server_to_client)"

it_log "UDP (ulim, inspect-bytes 300): 3 x 100 bytes scanned, then the fast path"
for f in 4 6; do
    dst=$(wan_addr $f)
    snap "ul$f-0"
    it_expect_eq "IPv$f ulim: 3 x 100 bytes echoed" "echoed echoed echoed" \
        "$(udp_send "$dst" 5354 4730$f fill:100 fill:100 fill:100)"
    snap "ul$f-1"
    sluice_fw show sessions --json >"$IT_TMP/ul$f-1.sess"
    it_expect_eq "IPv$f ulim: 6 datagrams scanned (3 each way)" 6 "$(idelta "ul$f-0" "ul$f-1" ulim stage.datagrams)"
    it_expect_eq "IPv$f ulim: offloaded once per direction" 2 "$(idelta "ul$f-0" "ul$f-1" ulim stage.offloaded)"
    it_expect_eq "IPv$f ulim: 4 more datagrams and limitme echoed" "echoed echoed echoed echoed echoed" \
        "$(udp_send "$dst" 5354 4730$f fill:100 fill:100 fill:100 fill:100 text:limitme)"
    snap "ul$f-2"
    sluice_fw show sessions --json >"$IT_TMP/ul$f-2.sess"
    src=$(lan_addr $f)
    read -r pf1 pr1 <<<"$(session_field "$IT_TMP/ul$f-1.sess" udp "$src" 4730$f "$dst" 5354 packets_forward packets_reply)"
    read -r pf2 pr2 <<<"$(session_field "$IT_TMP/ul$f-2.sess" udp "$src" 4730$f "$dst" 5354 packets_forward packets_reply)"
    it_expect_eq "IPv$f ulim: the session counted the 5 later datagrams each way (forward reply)" "5 5" \
        "$((${pf2:-0} - ${pf1:-0})) $((${pr2:-0} - ${pr1:-0}))"
    it_expect_ge "IPv$f ulim: XDP forwarded them (forward delta)" "$(sdelta "ul$f-1" "ul$f-2" forward)" 10
    it_expect_eq "IPv$f ulim: none of them was punted (punted_packets delta)" 0 \
        "$(idelta "ul$f-1" "ul$f-2" ulim fast_path.punted_packets)"
    it_expect_eq "IPv$f ulim: the stage saw none of them (datagrams delta)" 0 \
        "$(idelta "ul$f-1" "ul$f-2" ulim stage.datagrams)"
    it_expect_eq "IPv$f ulim: limitme after the limit matched nothing" 0 \
        "$(idelta "ul$f-0" "ul$f-2" ulim patterns.lim.matches)"
    it_expect_eq "IPv$f ulim: offloaded stays 2" 2 "$(idelta "ul$f-0" "ul$f-2" ulim stage.offloaded)"
done
it_finish
