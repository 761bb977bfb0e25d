#!/usr/bin/env bash
# Pattern semantics of the inspection stage (hyperscan, PCRE defaults: no
# DOTALL, no MULTILINE), TCP and UDP, IPv4 and IPv6; all rules reject,
# client to server:
#   caseless: true matches any case; caseless: false only the exact case;
#   '^' only at the start of the direction's stream (TCP) / of each datagram
#       (UDP), not after a newline, not at the start of a later segment;
#   '$' (also before a final '\n', as in PCRE; docs/inspect.md)
#       UDP: the end of a datagram (dropped); TCP: the end of the stream,
#       seen at the client's FIN, after the data was forwarded (documented
#       limitation): the connection is reset at FIN and the match counted;
#   '\xNN' hex escapes match binary bytes ('\x00\x01secret');
#   'alpha\nbeta' matches across a newline; 'gamma.delta' does not ('.' stops
#   at '\n') but matches 'gamma-delta'.
# Every case is checked against Python's re with the same patterns too, so a
# "passes" case really holds no match and a "blocked" case really holds one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/inspect_lib.sh"
it_init inspect_anchors ian
it_need_root_and_bpf
ins_need_stage
it_topology_up
ins_write_config "$IT_TMP/fw.yaml" <<'YAML'
        - { name: caseless, regex: 'secret-word', caseless: true, direction: client-to-server, action: reject }
        - { name: exact, regex: 'Exact-Case', caseless: false, direction: client-to-server, action: reject }
        - { name: start, regex: '^BEGIN-', direction: client-to-server, action: reject }
        - { name: end, regex: 'THE-END$', direction: client-to-server, action: reject }
        - { name: hex, regex: '\x00\x01secret', direction: client-to-server, action: reject }
        - { name: newline, regex: 'alpha\nbeta', direction: client-to-server, action: reject }
        - { name: dot, regex: 'gamma.delta', direction: client-to-server, action: reject }
YAML
it_sluice_start "$IT_TMP/fw.yaml"
# The same rules in Python's re (same PCRE defaults).
ANY='(?i:secret-word)|Exact-Case|^BEGIN-|THE-END$|\x00\x01secret|alpha\nbeta|gamma.delta'

# NAME|EXPECT|PATTERN-NAME|PIECE[|PIECE...]: EXPECT is block or pass; the
# pieces are sent with a pause between them; PATTERN-NAME the counter that
# must count a block.
TCP_CASES=(
    "caseless-upper|block|caseless|t:xx SECRET-WORD yy"
    "caseless-mixed|block|caseless|t:xx sEcReT-wOrD yy"
    "exact-lower|pass|-|t:xx exact-case yy"
    "exact-upper|pass|-|t:xx EXACT-CASE yy"
    "exact|block|exact|t:xx Exact-Case yy"
    "start-of-stream|block|start|t:BEGIN-now"
    "start-mid-line|pass|-|t:xx BEGIN-now"
    "start-after-newline|pass|-|t:hello\nBEGIN-now"
    "start-of-second-segment|pass|-|t:hello|t:BEGIN-now"
    "end-not-at-end|pass|-|t:xx THE-END yy"
    "hex|block|hex|x:ffee00017365637265740a"
    "hex-other-byte|pass|-|x:ffee00027365637265740a"
    "hex-text-only|pass|-|t:xx secret yy"
    "newline-literal|block|newline|t:xx alpha\nbeta yy"
    "newline-other-char|pass|-|t:xx alpha-beta yy"
    "dot-across-newline|pass|-|t:xx gamma\ndelta yy"
    "dot-any-char|block|dot|t:xx gamma-delta yy"
)

for fam in 4 6; do
    dst=$(ins_dst $fam)
    ins_tcp_server wan "$dst" 8080 "sink$fam" --idle 4
done

declare -A BLOCKS  # pattern -> block cases per family
for case in "${TCP_CASES[@]}"; do
    IFS='|' read -r -a f <<<"$case"
    [ "${f[1]}" = block ] && BLOCKS[${f[2]}]=$((${BLOCKS[${f[2]}]:-0} + 1))
done

conns0=$(ins_counter "" connections)
for fam in 4 6; do
    dst=$(ins_dst $fam)
    declare -A m0=()
    for p in "${!BLOCKS[@]}"; do m0[$p]=$(ins_counter "$p" matches); done
    # All cases of a family at once, each its own connection.
    pids=()
    for case in "${TCP_CASES[@]}"; do
        IFS='|' read -r -a f <<<"$case"
        args=()
        for p in "${f[@]:3}"; do args+=(--send "$p"); done
        ins_tcp_client_bg "${f[0]}-$fam" "$dst" 8080 --nodelay --pause 0.3 "${args[@]}"
        pids+=("$IT_LAST_PID")
    done
    ins_wait_all "${pids[@]}"
    for case in "${TCP_CASES[@]}"; do
        IFS='|' read -r -a f <<<"$case"
        name="${f[0]}-$fam"
        expect=${f[1]}
        label="IPv$fam TCP $expect ${f[0]}"
        c="$IT_TMP/$name.json"
        s=$(ins_server_result "sink$fam" "$name")
        if [ "$expect" = block ]; then
            it_check "$label: the client's data matches (Python re)" ins_contains "$c.sent" "$ANY"
            ins_expect_absent "$label: the server never got a match" "${s%.json}.recv" "$ANY"
            it_expect_eq "$label: client and server saw a reset" "reset reset" "$(jf "$c" recv_end) $(jf "$s" recv_end)"
        else
            ins_expect_absent "$label: the client's data holds no match (Python re)" "$c.sent" "$ANY"
            it_expect_eq "$label: arrived intact, then EOF" "$(jf "$c" sent sent_sha256) eof eof" \
                "$(jf "$s" recv_len recv_sha256 recv_end) $(jf "$c" recv_end)"
        fi
    done
    for p in "${!BLOCKS[@]}"; do
        it_expect_eq "IPv$fam TCP: pattern $p counted once per blocked connection" "$((${m0[$p]} + ${BLOCKS[$p]}))" \
            "$(ins_counter "$p" matches)"
    done

    # '$' over TCP: the end of the stream is known only at the client's FIN
    # (also before a final newline, as in PCRE).
    ends=('xx THE-END' 'xx THE-END\n')
    for i in 0 1; do
        end=${ends[$i]}
        name="end$i-$fam"
        label="IPv$fam TCP end of stream ('$end')"
        m0=$(ins_counter end matches)
        r0=$(ins_counter "" resets)
        ins_tcp_client "$name" "$dst" 8080 --send "t:$end"
        c="$IT_TMP/$name.json"
        s=$(ins_server_result "sink$fam" "$name")
        it_check "$label: the client's stream ends with the pattern (Python re)" ins_contains "$c.sent" 'THE-END$'
        it_expect_eq "$label: the client saw a reset (at its FIN), not EOF" reset "$(jf "$c" recv_end)"
        it_expect_eq "$label: the server saw a reset instead of EOF" reset "$(jf "$s" recv_end)"
        it_expect_eq "$label: pattern end counted" "$((m0 + 1))" "$(ins_counter end matches)"
        it_expect_eq "$label: a reset carried out" "$((r0 + 1))" "$(ins_counter "" resets)"
        it_log "  (documented: the server had received $(wc -c <"${s%.json}.recv" 2>/dev/null) bytes before the reset)"
    done
done
it_expect_eq "TCP: the stage carried every connection (the passing ones too)" "$((conns0 + 2 * (${#TCP_CASES[@]} + 2)))" \
    "$(ins_counter "" connections)"

# UDP: one flow, every datagram judged on its own; the server must log
# exactly the "pass" ones, in order.
UDP_CASES=(
    "pass|t:hello"
    "block|t:BEGIN-udp"
    "pass|t:xx BEGIN-udp"
    "block|t:xx THE-END"
    "block|t:xx THE-END\n"
    "pass|t:xx THE-END yy"
    "block|t:SECRET-WORD"
    "block|t:Secret-Word"
    "pass|t:exact-case"
    "block|t:Exact-Case"
    "block|x:0001736563726574"
    "pass|x:0002736563726574"
    "block|t:alpha\nbeta"
    "pass|t:gamma\ndelta"
    "block|t:gamma_delta"
    "pass|t:bye"
)
for fam in 4 6; do
    dst=$(ins_dst $fam)
    ins_udp_server wan "$dst" 5350 "udp$fam"
    args=()
    want=""
    sane=1
    for case in "${UDP_CASES[@]}"; do
        expect=${case%%|*}
        piece=${case#*|}
        args+=(--send "$piece")
        ins_payload "$IT_TMP/dgram" "$piece"
        if ins_contains "$IT_TMP/dgram" "$ANY"; then matches=block; else matches=pass; fi
        [ "$matches" = "$expect" ] || { sane=0; it_fail "UDP case $piece: Python re says $matches, the test expects $expect"; }
        [ "$expect" = pass ] && want+="$(ins_sha "$piece") "
    done
    [ "$sane" = 1 ] && it_pass "IPv$fam UDP cases agree with Python re"
    b0=$(ins_counter "" drops)
    d0=$(ins_counter "" datagrams)
    declare -A m0=()
    for p in start end caseless exact hex newline dot; do m0[$p]=$(ins_counter "$p" matches); done
    ins_udp_client "udp$fam" "$dst" 5350 "${args[@]}"
    got=$(ins_udp_seen "$IT_TMP/udp$fam.log" "$(jf "$IT_TMP/udp$fam.json" local_port)")
    if [ "${want% }" = "$(echo $got)" ]; then
        it_pass "IPv$fam UDP: exactly the datagrams without a match arrived, in order ('^' at each datagram's start, '$' at its end, case, hex, newline)"
    else
        it_fail "IPv$fam UDP: exactly the datagrams without a match arrived" "expected [${want% }], got [$(echo $got)]"
    fi
    it_expect_eq "IPv$fam UDP: one drop per datagram with a match" "$((b0 + 9))" "$(ins_counter "" drops)"
    it_expect_eq "IPv$fam UDP: the stage scanned every datagram" "$((d0 + ${#UDP_CASES[@]}))" "$(ins_counter "" datagrams)"
    for p in start end caseless exact hex newline dot; do
        it_expect_ge "IPv$fam UDP: pattern $p counted (this family's datagrams)" \
            "$(( $(ins_counter "$p" matches) - ${m0[$p]} ))" 1
    done
done
it_expect_eq "no stage errors" "0" "$(ins_counter "" stage_errors)"
it_finish
