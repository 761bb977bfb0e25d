#!/usr/bin/env bash
# A reject pattern split, reordered or overlapped on the wire cannot pass the
# inspection stage, IPv4 and IPv6 (rule: 'flag\{[a-z]+\}', both directions).
#
# Part A, ordinary sockets with TCP_NODELAY: the pattern split across two
# sends (a pause between them) and across one-byte sends (client to server
# and server to client). The receiver gets data up to the pattern but never
# the whole pattern; both ends see a reset.
#
# Part B, raw segments built with scapy from the LAN host (its kernel's RSTs
# for the raw ports are dropped by an nft rule inside the LAN namespace):
# split, reversed, hole-filled-last and overlapping segments, and overlapping
# retransmissions where one copy is harmless ('flag{a1c}') and the other
# carries the pattern ('flag{abc}'), in either order, in and out of order.
# Two more send the pattern's segment as IP fragments: in order (reset), and
# in reverse order, which the fast path drops by design (a later fragment
# with no record of its first one, docs/datapath.md): the segment is lost,
# no reset, the server gets nothing of it (class "lost").
# For every scenario:
#   - the segments really carried the pattern (the stream assembled keeping
#     the first or the last copy of each byte contains it);
#   - the server never receives the whole pattern, and what it receives is a
#     prefix of one of those two assemblies (the stage forwards exactly the
#     stream the firewall's TCP accepted);
#   - when the accepted stream must contain the pattern whatever a receiver
#     does with overlaps (split, reordered, identical overlaps, pattern copy
#     first in order) the client gets a RST, the server a reset, and the
#     client's later segments hit the session verdict (drop-session-verdict);
#   - a harmless copy accepted in order wins against a later retransmission
#     carrying the pattern (the retransmitted bytes are old data): no reset,
#     the server gets the harmless stream and EOF;
#   - where the outcome depends on how the receiver resolves an out-of-order
#     overlap, it is one of: reset (pattern kept), or the complete harmless
#     stream and EOF (harmless copy kept); never the pattern.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/inspect_lib.sh"
it_init inspect_evasion iev
it_need_root_and_bpf
ins_need_stage
it_topology_up
ins_write_config "$IT_TMP/fw.yaml" <<'YAML'
        - { name: flag, regex: 'flag\{[a-z]+\}', direction: both, action: reject }
YAML
it_sluice_start "$IT_TMP/fw.yaml"
PAT='flag\{[a-z]+\}'

# The LAN host's kernel answers segments for the raw client's ports (it has
# no socket for them) with RSTs: drop those, in the LAN namespace only.
lan nft -f - <<'NFT' || it_skip_bpf "cannot add the nft rule in the LAN namespace"
table inet sluice_evasion {
    chain out {
        type filter hook output priority 0; policy accept;
        tcp sport 20000-20999 tcp flags & rst == rst drop
    }
}
NFT

for fam in 4 6; do
    dst=$(ins_dst $fam)
    ins_tcp_server wan "$dst" 8080 "sink$fam" --idle 4
    ins_tcp_server wan "$dst" 8081 "drip$fam" --send 't:srv: hello flag{xyz} bye\n' --chunk 1 --pause 0.05 \
        --nodelay --send-after-recv --idle 4
    ins_tcp_server wan "$dst" 8086 "raw$fam" --idle 4
done

# --- Part A: sockets ----------------------------------------------------------------
for fam in 4 6; do
    dst=$(ins_dst $fam)
    v="IPv$fam"

    ins_tcp_client "two$fam" "$dst" 8080 --nodelay --send 't:hello fla' --send 't:g{abc} bye\n' --pause 0.4
    c="$IT_TMP/two$fam.json"
    s=$(ins_server_result "sink$fam" "two$fam")
    it_check "$v split in 2 sends: the client really sent the pattern" ins_contains "$c.sent" "$PAT"
    it_expect_eq "$v split in 2 sends: the first part reached the server alone (the stage saw the pattern split)" \
        "hello fla" "$(cat "${s%.json}.recv" 2>/dev/null)"
    ins_expect_absent "$v split in 2 sends: the server never got the whole pattern" "${s%.json}.recv" "$PAT"
    it_expect_eq "$v split in 2 sends: client and server saw a reset" "reset reset" "$(jf "$c" recv_end) $(jf "$s" recv_end)"

    ins_tcp_client "one$fam" "$dst" 8080 --nodelay --send 't:hello flag{abcdef} bye\n' --chunk 1 --pause 0.05
    c="$IT_TMP/one$fam.json"
    s=$(ins_server_result "sink$fam" "one$fam")
    it_check "$v one byte per send: the client really sent the pattern" ins_contains "$c.sent" "$PAT"
    it_expect_ge "$v one byte per send: the client made one send per byte up to the pattern's end" "$(jf "$c" sends)" 17
    ins_expect_absent "$v one byte per send: the server never got the whole pattern" "${s%.json}.recv" "$PAT"
    it_check "$v one byte per send: the server got a prefix of the stream" ins_is_prefix "${s%.json}.recv" "$c.sent"
    it_expect_ge "$v one byte per send: the server got pattern bytes before the last one (the match spanned segments)" \
        "$(stat -c %s "${s%.json}.recv" 2>/dev/null)" 8
    it_expect_eq "$v one byte per send: client and server saw a reset" "reset reset" "$(jf "$c" recv_end) $(jf "$s" recv_end)"

    ins_tcp_client "drip$fam" "$dst" 8081 --send 't:hi' --no-shut --idle 4
    c="$IT_TMP/drip$fam.json"
    s=$(ins_server_result "drip$fam" "drip$fam")
    it_check "$v server sends one byte per send: the server really sent the pattern" ins_contains "${s%.json}.sent" "$PAT"
    ins_expect_absent "$v server sends one byte per send: the client never got the whole pattern" "$c.recv" "$PAT"
    it_check "$v server sends one byte per send: the client got a prefix of the server's stream" \
        ins_is_prefix "$c.recv" "${s%.json}.sent"
    it_expect_eq "$v server sends one byte per send: client and server saw a reset" "reset reset" \
        "$(jf "$c" recv_end) $(jf "$s" recv_end)"
done

# --- Part B: raw segments -------------------------------------------------------------
# M = "hello flag{abc} bye\n" (the pattern at 6..14), H = "hello flag{a1c} bye\n".
# NAME|CLASS|RAW-TCP OPTIONS|SEGMENTS...; CLASS: reset | harmless | either
# (see the top). The fragment scenarios put 24 bytes before the pattern so
# that it straddles the boundary of two 24-byte IP fragments.
X24=xxxxxxxxxxxxxxxxxxxxxxxx
SCENARIOS=(
    "split2|reset|-|0:t:hello fla|9:t:g{abc} bye\n"
    "reversed|reset|-|16:t:bye\n|12:t:bc} |8:t:ag{a|4:t:o fl|0:t:hell"
    "hole-filled-last|reset|-|6:t:flag{abc}|15:t: bye\n|0:t:hello "
    "overlap-identical|reset|-|0:t:hello fla|3:t:lo flag{ab|8:t:ag{abc} b|12:t:bc} bye\n"
    "pattern-first-in-order|reset|-|0:t:hello flag{abc}|6:t:flag{a1c} bye\n"
    "harmless-first-in-order|harmless|-|0:t:hello flag{a1c}|6:t:flag{abc} bye\n"
    "ooo-harmless-then-pattern-same-range|either|-|6:t:flag{a1c}|6:t:flag{abc}|0:t:hello |15:t: bye\n"
    "ooo-pattern-then-harmless-same-range|either|-|6:t:flag{abc}|6:t:flag{a1c}|0:t:hello |15:t: bye\n"
    "ooo-harmless-then-longer-pattern|either|-|6:t:flag{a1c}|6:t:flag{abc} bye\n|0:t:hello "
    "ooo-pattern-then-longer-harmless|either|-|6:t:flag{abc}|6:t:flag{a1c} bye\n|0:t:hello "
    "ooo-partial-overlap-pattern-first|either|-|9:t:g{abc} bye\n|4:t:o flag{a1|0:t:hell"
    "ooo-partial-overlap-harmless-first|either|-|4:t:o flag{a1|9:t:g{abc} bye\n|0:t:hell"
    "ip-fragments|reset|--frag 24|0:t:${X24}flag{abc} bye\n"
    "ip-fragments-reversed|lost|--frag 24 --frag-reverse|0:t:${X24}flag{abc} bye\n"
)

verdict0=$(ins_stat drop-session-verdict)
norecord0=$(ins_stat drop-fragment-no-record)
declare -A RAW_PID
sport=20000
for fam in 4 6; do
    for sc in "${SCENARIOS[@]}"; do
        IFS='|' read -r -a f <<<"$sc"
        name="${f[0]}-$fam"
        args=()
        [ "${f[2]}" != - ] && read -r -a args <<<"${f[2]}"
        for seg in "${f[@]:3}"; do args+=(--seg "$seg"); done
        sport=$((sport + 1))
        # All scenarios run at once (each its own connection); --after: a
        # client that keeps sending after the verdict.
        it_bg "raw-$name" ip netns exec "$P-lan" "$IT_PY" "$INS_PEER" raw-tcp --src "$(ins_src $fam)" --sport "$sport" \
            --dst "$(ins_dst $fam)" --dport 8086 --result "$IT_TMP/$name.json" --fin --wait 1.5 \
            --after 't:sent after the verdict' "${args[@]}"
        RAW_PID[$name]=$IT_LAST_PID
    done
done
ins_wait_all "${RAW_PID[@]}"

resets=0
for fam in 4 6; do
    for sc in "${SCENARIOS[@]}"; do
        IFS='|' read -r -a f <<<"$sc"
        name="${f[0]}-$fam"
        class=${f[1]}
        label="IPv$fam raw $name"
        c="$IT_TMP/$name.json"
        if [ "$(jf "$c" synack)" != True ]; then
            it_fail "$label: handshake" "$(cat "$IT_TMP/raw-$name.log" 2>/dev/null | tail -n 3)"
            continue
        fi
        s=$(ins_server_result "raw$fam" "$name")
        recv="${s%.json}.recv"
        if ins_contains "$c.first" "$PAT" || ins_contains "$c.last" "$PAT"; then
            it_pass "$label: the segments carried the pattern"
        else
            it_fail "$label: the segments carried the pattern"
        fi
        ins_expect_absent "$label: the server never got the whole pattern" "$recv" "$PAT"
        if [ -f "$recv" ] && { ins_is_prefix "$recv" "$c.first" || ins_is_prefix "$recv" "$c.last"; }; then
            it_pass "$label: the server got a prefix of an assembly of the segments"
        else
            it_fail "$label: the server got a prefix of an assembly of the segments" "got: $(cat "$recv" 2>/dev/null)"
        fi
        rst=$(jf "$c" rst_before_after)
        srv_end=$(jf "$s" recv_end)
        case $class in
        reset)
            it_expect_eq "$label: the client got a RST and the server a reset" "1 reset" "$rst $srv_end"
            ;;
        harmless)
            it_expect_eq "$label: no RST; the server got the harmless stream and EOF" \
                "0 $(cat "$c.first") eof" "$rst $(cat "$recv" 2>/dev/null) $srv_end"
            ;;
        either)
            if [ "$rst" = 1 ] && [ "$srv_end" = reset ]; then
                it_pass "$label: reset (the firewall's TCP kept the pattern copy)"
            elif [ "$rst" = 0 ] && [ "$srv_end" = eof ] &&
                { cmp -s "$recv" "$c.first" || cmp -s "$recv" "$c.last"; }; then
                it_pass "$label: no reset, the server got a whole harmless assembly (the harmless copy was kept)"
            else
                it_fail "$label: reset, or the whole harmless stream" "client RSTs $rst, server $srv_end, got: $(cat "$recv" 2>/dev/null)"
            fi
            ;;
        lost)
            it_expect_eq "$label: the segment was lost: no RST, the server got nothing and waited" \
                "0  timeout" "$rst $(cat "$recv" 2>/dev/null) $srv_end"
            ;;
        esac
        [ "$rst" = 1 ] && resets=$((resets + 1))
    done
done
it_expect_ge "raw clients that kept sending after a reset hit the session verdict (drop-session-verdict)" \
    "$(($(ins_stat drop-session-verdict) - verdict0))" "$resets"
it_expect_ge "reversed fragments: the later ones were dropped for want of a record (drop-fragment-no-record)" \
    "$(($(ins_stat drop-fragment-no-record) - norecord0))" 2
it_expect_eq "the stage carried every connection (3 per family with sockets, one per raw scenario)" \
    "$((2 * (3 + ${#SCENARIOS[@]})))" "$(ins_counter "" connections)"
it_expect_ge "every reject was counted" "$(ins_counter "" resets)" "$((resets + 6))"
it_finish
