#!/usr/bin/env bash
# TCP through the inspection stage, IPv4 and IPv6: a pattern in one segment
# is handled per its action and direction.
#   reject: both ends see a reset; the receiver never gets the pattern.
#   drop:   the receiver never gets the pattern; neither end sees a RST (or
#           FIN): the client's later data stays unacknowledged and its
#           retransmissions hit the session verdict (drop-session-verdict).
#   alert:  the data arrives intact, the match is counted.
# A client-to-server rule ignores server-to-client data and vice versa;
# `both` fires either way. Control: the same payload to a port that is
# permitted without inspection arrives intact.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/inspect_lib.sh"
it_init inspect_block ibl
it_need_root_and_bpf
ins_need_stage
it_topology_up
ins_write_config "$IT_TMP/fw.yaml" <<'YAML'
        - { name: rej-c2s, regex: 'REJ-C2S-[0-9]+!', direction: client-to-server, action: reject }
        - { name: rej-s2c, regex: 'REJ-S2C-[0-9]+!', direction: server-to-client, action: reject }
        - { name: rej-both, regex: 'REJ-BOTH-[0-9]+!', direction: both, action: reject }
        - { name: drop-c2s, regex: 'DROP-C2S-[0-9]+!', direction: client-to-server, action: drop }
        - { name: drop-s2c, regex: 'DROP-S2C-[0-9]+!', direction: server-to-client, action: drop }
        - { name: alert-both, regex: 'ALERT-[0-9]+!', direction: both, action: alert }
YAML
it_sluice_start "$IT_TMP/fw.yaml"

# Servers per family: what each sends to every client (server->client data).
#   (8081-8085 answer once the client's first bytes arrived)
#   8080 nothing            8081 the c2s-only reject pattern   8082 the s2c reject pattern
#   8083 the both pattern   8084 the s2c drop pattern           8085 the alert pattern
#   8090 nothing, not inspected (control)
S_C2S='t:srv says REJ-C2S-81! ok\n'
S_S2C='t:srv says REJ-S2C-82! ok\n'
S_BOTH='t:srv says REJ-BOTH-83! ok\n'
S_DROP='t:srv says DROP-S2C-84! ok\n'
S_ALERT='t:srv says ALERT-85! ok\n'
for fam in 4 6; do
    dst=$(ins_dst $fam)
    ins_tcp_server wan "$dst" 8080 "sink$fam" --idle 4
    ins_tcp_server wan "$dst" 8081 "c2s$fam" --send "$S_C2S" --send-after-recv --idle 4
    ins_tcp_server wan "$dst" 8082 "s2c$fam" --send "$S_S2C" --send-after-recv --idle 4
    ins_tcp_server wan "$dst" 8083 "both$fam" --send "$S_BOTH" --send-after-recv --idle 4
    ins_tcp_server wan "$dst" 8084 "drop$fam" --send "$S_DROP" --send-after-recv --idle 4
    ins_tcp_server wan "$dst" 8085 "alert$fam" --send "$S_ALERT" --send-after-recv --idle 4
    ins_tcp_server wan "$dst" 8090 "plain$fam" --idle 4
done

# expect_reset LABEL CLIENT SERVERFILE REGEX SENDER: a reject fired: the
# pattern was really sent (by SENDER's side), the receiver never got it, both
# ends saw a reset.
expect_reset() {
    local label=$1 c=$2 s=$3 regex=$4 sender=$5 sent recv
    if [ "$sender" = client ]; then sent="$c.sent"; recv="${s%.json}.recv"; else sent="${s%.json}.sent"; recv="$c.recv"; fi
    it_check "$label: the $sender really sent the pattern" ins_contains "$sent" "$regex"
    ins_expect_absent "$label: the receiver never got the pattern" "$recv" "$regex"
    it_expect_eq "$label: the client saw a reset" reset "$(jf "$c" recv_end)"
    it_expect_eq "$label: the server saw a reset" reset "$(jf "$s" recv_end)"
}

# expect_intact LABEL CLIENT SERVERFILE REGEX SENDER: the data carrying the
# pattern passed both ways byte-exact and both ends closed normally.
expect_intact() {
    local label=$1 c=$2 s=$3 regex=$4 sender=$5 sent
    if [ "$sender" = client ]; then sent="$c.sent"; else sent="${s%.json}.sent"; fi
    it_check "$label: the $sender really sent the pattern" ins_contains "$sent" "$regex"
    it_expect_eq "$label: client->server arrived intact" "$(jf "$c" sent sent_sha256) eof" \
        "$(jf "$s" recv_len recv_sha256 recv_end)"
    it_expect_eq "$label: server->client arrived intact" "$(jf "$s" sent sent_sha256) eof" \
        "$(jf "$c" recv_len recv_sha256 recv_end)"
}

for fam in 4 6; do
    dst=$(ins_dst $fam)
    v="IPv$fam"

    conns0=$(ins_counter "" connections)
    # --- reject ------------------------------------------------------------------
    m0=$(ins_counter rej-c2s matches)
    r0=$(ins_counter "" resets)
    ins_tcp_client "rc$fam" "$dst" 8080 --send 't:hello ' --send 't:there REJ-C2S-1! more' --send 't:still more' --pause 0.3
    c="$IT_TMP/rc$fam.json"
    s=$(ins_server_result "sink$fam" "rc$fam")
    expect_reset "$v reject client->server" "$c" "$s" 'REJ-C2S-[0-9]+!' client
    it_expect_eq "$v reject client->server: data before the pattern was delivered" "hello " "$(cat "${s%.json}.recv" 2>/dev/null)"
    it_expect_eq "$v reject client->server: pattern rej-c2s counted once" "$((m0 + 1))" "$(ins_counter rej-c2s matches)"
    it_expect_eq "$v reject client->server: one reset carried out" "$((r0 + 1))" "$(ins_counter "" resets)"

    ins_tcp_client "rs$fam" "$dst" 8082 --send 't:hello' --no-shut --idle 3
    c="$IT_TMP/rs$fam.json"
    s=$(ins_server_result "s2c$fam" "rs$fam")
    expect_reset "$v reject server->client" "$c" "$s" 'REJ-S2C-[0-9]+!' server

    ins_tcp_client "rb1$fam" "$dst" 8080 --send 't:x REJ-BOTH-1! y'
    c="$IT_TMP/rb1$fam.json"
    s=$(ins_server_result "sink$fam" "rb1$fam")
    expect_reset "$v reject both, client->server data" "$c" "$s" 'REJ-BOTH-[0-9]+!' client
    ins_tcp_client "rb2$fam" "$dst" 8083 --send 't:hello' --no-shut --idle 3
    c="$IT_TMP/rb2$fam.json"
    s=$(ins_server_result "both$fam" "rb2$fam")
    expect_reset "$v reject both, server->client data" "$c" "$s" 'REJ-BOTH-[0-9]+!' server

    # --- direction honoured ---------------------------------------------------------
    m0=$(ins_counter rej-c2s matches)
    ins_tcp_client "dc$fam" "$dst" 8081 --send 't:hi'
    c="$IT_TMP/dc$fam.json"
    s=$(ins_server_result "c2s$fam" "dc$fam")
    expect_intact "$v client->server rule, pattern sent server->client" "$c" "$s" 'REJ-C2S-[0-9]+!' server
    it_expect_eq "$v client->server rule did not match server->client data" "$m0" "$(ins_counter rej-c2s matches)"

    m0=$(ins_counter rej-s2c matches)
    ins_tcp_client "ds$fam" "$dst" 8080 --send 't:client says REJ-S2C-2! ok'
    c="$IT_TMP/ds$fam.json"
    s=$(ins_server_result "sink$fam" "ds$fam")
    expect_intact "$v server->client rule, pattern sent client->server" "$c" "$s" 'REJ-S2C-[0-9]+!' client
    it_expect_eq "$v server->client rule did not match client->server data" "$m0" "$(ins_counter rej-s2c matches)"

    # --- alert ------------------------------------------------------------------------
    m0=$(ins_counter alert-both matches)
    a0=$(ins_counter "" alerts)
    ins_tcp_client "al$fam" "$dst" 8085 --send 't:client says ALERT-3! ok'
    c="$IT_TMP/al$fam.json"
    s=$(ins_server_result "alert$fam" "al$fam")
    expect_intact "$v alert (client->server)" "$c" "$s" 'ALERT-[0-9]+!' client
    expect_intact "$v alert (server->client)" "$c" "$s" 'ALERT-[0-9]+!' server
    # Counters count flows: a pattern that matched in both directions of one
    # connection counts once (docs/inspect.md, Counters).
    it_expect_eq "$v alert: matched in both directions, counted once for the connection" "$((m0 + 1))" "$(ins_counter alert-both matches)"
    it_expect_eq "$v alert: one alert counted for the connection" "$((a0 + 1))" "$(ins_counter "" alerts)"

    it_expect_eq "$v: the stage carried each of the 7 connections above (the passing ones too)" \
        "$((conns0 + 7))" "$(ins_counter "" connections)"
    # --- control: no inspection, same payload ------------------------------------------
    ins_tcp_client "pl$fam" "$dst" 8090 --send 't:hello REJ-C2S-9! DROP-C2S-9!'
    c="$IT_TMP/pl$fam.json"
    s=$(ins_server_result "plain$fam" "pl$fam")
    expect_intact "$v control: a port permitted without inspection" "$c" "$s" 'REJ-C2S-[0-9]+!' client
    it_expect_eq "$v control: it did not go through the stage" "$((conns0 + 7))" "$(ins_counter "" connections)"
done
# --- drop (the four connections at once: each waits for read timeouts) -------------
m0=$(ins_counter drop-c2s matches)
m1=$(ins_counter drop-s2c matches)
d0=$(ins_counter "" drops)
v0=$(ins_stat drop-session-verdict)
pids=()
for fam in 4 6; do
    dst=$(ins_dst $fam)
    ins_tcp_client_bg "dr$fam" "$dst" 8080 --send 't:hello ' --send 't:DROP-C2S-5!' --send 't:after the pattern' \
        --send 't:and more' --pause 0.3 --idle 3
    pids+=("$IT_LAST_PID")
    ins_tcp_client_bg "ds2$fam" "$dst" 8084 --send 't:hello' --no-shut --idle 3
    pids+=("$IT_LAST_PID")
done
ins_wait_all "${pids[@]}"
for fam in 4 6; do
    v="IPv$fam"
    c="$IT_TMP/dr$fam.json"
    s=$(ins_server_result "sink$fam" "dr$fam")
    it_check "$v drop client->server: the client really sent the pattern" ins_contains "$c.sent" 'DROP-C2S-[0-9]+!'
    ins_expect_absent "$v drop client->server: the server got neither the pattern nor later data" "${s%.json}.recv" \
        'DROP-C2S-[0-9]+!|after the pattern'
    it_expect_eq "$v drop client->server: the server got the data before the pattern" "hello " "$(cat "${s%.json}.recv" 2>/dev/null)"
    it_expect_eq "$v drop client->server: neither end saw a RST or FIN (both reads timed out)" "timeout timeout" \
        "$(jf "$c" recv_end) $(jf "$s" recv_end)"
    read -r unacked retrans state <<<"$(jf "$c" unacked total_retrans tcp_state)"
    it_expect_ge "$v drop client->server: the client's later data was never acknowledged (unacked segments)" "$unacked" 1
    it_expect_ge "$v drop client->server: the client retransmitted" "$retrans" 1
    it_expect_eq "$v drop client->server: the client socket still waits for its FIN to be acknowledged (no RST)" \
        FIN_WAIT1 "$state"

    c="$IT_TMP/ds2$fam.json"
    s=$(ins_server_result "drop$fam" "ds2$fam")
    it_check "$v drop server->client: the server really sent the pattern" ins_contains "${s%.json}.sent" 'DROP-S2C-[0-9]+!'
    ins_expect_absent "$v drop server->client: the client never got the pattern" "$c.recv" 'DROP-S2C-[0-9]+!'
    it_expect_eq "$v drop server->client: neither end saw a RST or FIN (both reads timed out)" "timeout timeout" \
        "$(jf "$c" recv_end) $(jf "$s" recv_end)"
done
# Only the drop connections ran since v0 was read: the growth is theirs.
it_expect_ge "drop: the clients' retransmissions hit the session verdict (drop-session-verdict)" \
    "$(($(ins_stat drop-session-verdict) - v0))" 2
it_expect_eq "drop: pattern drop-c2s counted once per connection" "$((m0 + 2))" "$(ins_counter drop-c2s matches)"
it_expect_eq "drop: pattern drop-s2c counted once per connection" "$((m1 + 2))" "$(ins_counter drop-s2c matches)"
it_expect_eq "drop: one drop carried out per connection" "$((d0 + 4))" "$(ins_counter "" drops)"

it_expect_eq "no stage errors" "0" "$(ins_counter "" stage_errors)"
it_finish
