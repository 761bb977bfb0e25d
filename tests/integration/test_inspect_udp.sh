#!/usr/bin/env bash
# UDP through the inspection stage, IPv4 and IPv6. Each datagram is scanned
# on its own:
#   - clean datagrams of many sizes (1 B up to the largest a UDP datagram of
#     the family can carry, unfragmented and fragmented) arrive byte-exact,
#     in both directions, and the stage counted them;
#   - a datagram carrying a pattern is dropped (drop and reject alike) and the
#     flow goes on: the next clean datagram passes, also when the very first
#     datagram of a flow was the dropped one;
#   - direction is honoured (client-to-server / server-to-client / both);
#     alert only counts;
#   - a flow whose first datagram is fragmented (documented: that datagram may
#     be lost) goes on, and its client is not told "port unreachable".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/inspect_lib.sh"
it_init inspect_udp iud
it_need_root_and_bpf
ins_need_stage
it_topology_up
ins_write_config "$IT_TMP/fw.yaml" <<'YAML'
        - { name: never, regex: 'sluice-never-[0-9]{12}-never', direction: both, action: reject }
        - { name: udp-c2s, regex: 'UDP-C2S-[0-9]+!', direction: client-to-server, action: drop }
        - { name: udp-s2c, regex: 'UDP-S2C-[0-9]+!', direction: server-to-client, action: reject }
        - { name: udp-both, regex: 'UDP-BOTH-[0-9]+!', direction: both, action: drop }
        - { name: udp-alert, regex: 'UDP-ALERT-[0-9]+!', direction: both, action: alert }
YAML
it_sluice_start "$IT_TMP/fw.yaml"

# sizes: 1 B .. the largest datagram (65507 B IPv4, 65527 B IPv6), around the
# 1500-byte MTU (the largest unfragmented one and one byte more).
sizes_for() { if [ "$1" = 4 ]; then echo "1 100 1400 1472 1473 8000 65507"; else echo "1 100 1400 1452 1453 8000 65527"; fi; }

# expect_list LABEL "PIECE PIECE ..." ACTUAL_SHA_LIST: the datagrams that
# arrived, in order, are exactly these pieces.
expect_list() {
    local label=$1 want="" p got
    for p in $2; do want+="$(ins_sha "$p") "; done
    want=${want% }
    got=$(echo $3)
    if [ "$want" = "$got" ]; then
        it_pass "$label ($(echo $got | wc -w) datagrams)"
    else
        it_fail "$label" "expected sha256 [$want], got [$got]"
    fi
}

punted0=$(ins_stat punt-to-inspection)
frag_datagrams=0  # scanned in the fragmented-first-datagram flows (not counted below)
for fam in 4 6; do
    dst=$(ins_dst $fam)
    sends=()
    replies=()
    pieces_c=""
    pieces_s=""
    for size in $(sizes_for $fam); do
        sends+=(--send "r:$size:$((fam * 10 + 1))")
        replies+=(--reply "r:$size:$((fam * 10 + 2))")
        pieces_c+="r:$size:$((fam * 10 + 1)) "
        pieces_s+="r:$size:$((fam * 10 + 2)) "
    done
    ins_udp_server wan "$dst" 5350 "pass$fam" "${replies[@]}" --pause 0.05
    ins_udp_server wan "$dst" 5351 "sink$fam"
    ins_udp_server wan "$dst" 5352 "s2c$fam" --reply 't:r-1' --reply 't:srv UDP-S2C-3! x' --reply 't:r-2'
    ins_udp_server wan "$dst" 5353 "c2s$fam" --reply 't:srv UDP-C2S-5! x'
    ins_udp_server wan "$dst" 5354 "both$fam" --reply 't:UDP-BOTH-7!' --reply 't:r-3'
    v="IPv$fam"

    # --- clean datagrams, both directions ---------------------------------------
    d0=$(ins_counter "" datagrams)
    ins_udp_client "pass$fam" "$dst" 5350 "${sends[@]}" --pause 0.05 --idle 2
    c="$IT_TMP/pass$fam.json"
    ins_payload "$IT_TMP/payload" $pieces_c $pieces_s
    if ins_contains "$IT_TMP/payload" 'sluice-never|UDP-'; then it_fail "$v: a clean test payload contains a pattern"; fi
    expect_list "$v clean datagrams ($(sizes_for $fam) B) client->server arrive exact, in order" "$pieces_c" \
        "$(ins_udp_seen "$IT_TMP/pass$fam.log" "$(jf "$c" local_port)")"
    expect_list "$v clean datagrams ($(sizes_for $fam) B) server->client arrive exact, in order" "$pieces_s" \
        "$(ins_udp_got "$c")"
    it_expect_eq "$v: the stage scanned every datagram, each way" 14 "$(($(ins_counter "" datagrams) - d0))"

    # --- client-to-server drop; the flow goes on -----------------------------------
    m0=$(ins_counter udp-c2s matches)
    dr0=$(ins_counter "" drops)
    ins_udp_client "c2s$fam" "$dst" 5351 --send 't:a-1' --send 't:x UDP-C2S-1! y' --send 't:a-2'
    c="$IT_TMP/c2s$fam.json"
    expect_list "$v client->server pattern: dropped, the datagrams around it pass" "t:a-1 t:a-2" \
        "$(ins_udp_seen "$IT_TMP/sink$fam.log" "$(jf "$c" local_port)")"
    it_expect_eq "$v client->server pattern: counted" "$((m0 + 1))" "$(ins_counter udp-c2s matches)"
    it_expect_eq "$v client->server pattern: a drop carried out" "$((dr0 + 1))" "$(ins_counter "" drops)"

    ins_udp_client "first$fam" "$dst" 5351 --send 't:UDP-C2S-2!' --send 't:b-1' --send 't:b-2'
    c="$IT_TMP/first$fam.json"
    expect_list "$v pattern in a flow's first datagram: dropped, the next ones pass" "t:b-1 t:b-2" \
        "$(ins_udp_seen "$IT_TMP/sink$fam.log" "$(jf "$c" local_port)")"

    # --- server-to-client (a reject rule drops the datagram too) --------------------
    m0=$(ins_counter udp-s2c matches)
    ins_udp_client "s2c$fam" "$dst" 5352 --send 't:hi' --send 't:hi again'
    c="$IT_TMP/s2c$fam.json"
    expect_list "$v server->client pattern: dropped, the replies around it pass" "t:r-1 t:r-2" "$(ins_udp_got "$c")"
    expect_list "$v server->client pattern: the client's datagrams still pass" "t:hi t:hi\x20again" \
        "$(ins_udp_seen "$IT_TMP/s2c$fam.log" "$(jf "$c" local_port)")"
    it_expect_eq "$v server->client pattern: counted" "$((m0 + 1))" "$(ins_counter udp-s2c matches)"

    # --- direction honoured ---------------------------------------------------------
    ins_udp_client "dir1$fam" "$dst" 5351 --send 't:cli UDP-S2C-4! x'
    c="$IT_TMP/dir1$fam.json"
    expect_list "$v server->client rule ignores client->server datagrams" "t:cli\x20UDP-S2C-4!\x20x" \
        "$(ins_udp_seen "$IT_TMP/sink$fam.log" "$(jf "$c" local_port)")"
    ins_udp_client "dir2$fam" "$dst" 5353 --send 't:hi'
    c="$IT_TMP/dir2$fam.json"
    expect_list "$v client->server rule ignores server->client datagrams" "t:srv\x20UDP-C2S-5!\x20x" "$(ins_udp_got "$c")"

    # --- both -------------------------------------------------------------------------
    ins_udp_client "both1$fam" "$dst" 5351 --send 't:c-0' --send 't:UDP-BOTH-6!' --send 't:c-1'
    c="$IT_TMP/both1$fam.json"
    expect_list "$v both: client->server pattern dropped" "t:c-0 t:c-1" \
        "$(ins_udp_seen "$IT_TMP/sink$fam.log" "$(jf "$c" local_port)")"
    ins_udp_client "both2$fam" "$dst" 5354 --send 't:hi'
    c="$IT_TMP/both2$fam.json"
    expect_list "$v both: server->client pattern dropped" "t:r-3" "$(ins_udp_got "$c")"

    # --- a flow whose first datagram is fragmented (docs/inspect.md, Limits: that
    # datagram is expected to be lost) ------------------------------------------------
    fd0=$(ins_counter "" datagrams)
    ins_udp_client "frag$fam" "$dst" 5351 --send r:8000:7 --send t:f-1 --send t:f-2 --send t:f-3 --pause 0.3
    c="$IT_TMP/frag$fam.json"
    seen=$(ins_udp_seen "$IT_TMP/sink$fam.log" "$(jf "$c" local_port)")
    big=$(ins_sha r:8000:7)
    case " $seen " in
    *" $big "*) it_log "  (IPv$fam: the fragmented first datagram arrived)" ;;
    *) it_log "  (IPv$fam: the fragmented first datagram was lost, as documented)" ;;
    esac
    if [ "$fam" = 4 ]; then
        it_expect_eq "$v fragmented first datagram: the client's socket got no error (no ICMP port unreachable for an open port)" \
            "[]" "$(jf "$c" errors)"
        expect_list "$v fragmented first datagram: the flow goes on, the next datagrams pass" "t:f-1 t:f-2 t:f-3" \
            "${seen/$big/}"
    else
        # docs/inspect.md, Limits: on IPv6 the firewall answers it with a port
        # unreachable (a known limit, noted on the issue), so the flow is not checked.
        it_log "  (IPv6: errors $(jf "$c" errors); documented limit)"
    fi
    frag_datagrams=$((frag_datagrams + $(ins_counter "" datagrams) - fd0))

    # --- alert --------------------------------------------------------------------------
    a0=$(ins_counter "" alerts)
    ins_udp_client "alert$fam" "$dst" 5351 --send 't:UDP-ALERT-8!'
    c="$IT_TMP/alert$fam.json"
    expect_list "$v alert: the datagram passes" "t:UDP-ALERT-8!" \
        "$(ins_udp_seen "$IT_TMP/sink$fam.log" "$(jf "$c" local_port)")"
    it_expect_eq "$v alert: counted" "$((a0 + 1))" "$(ins_counter "" alerts)"
done
# Per family: 14 clean + 3 + 3 + (2 + 3) + 1 + (1 + 1) + 3 + (1 + 2) + 1.
it_expect_eq "the stage scanned every datagram sent, both directions (35 per family, the fragment flows aside)" \
    70 "$(($(ins_counter "" datagrams) - frag_datagrams))"
it_expect_ge "punt-to-inspection grew (every datagram crossed the punt path)" "$(($(ins_stat punt-to-inspection) - punted0))" 40
it_expect_eq "no stage errors" "0" "$(ins_counter "" stage_errors)"
it_finish
