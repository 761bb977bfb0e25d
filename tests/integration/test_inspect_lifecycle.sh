#!/usr/bin/env bash
# How the inspection stage's TCP relay opens and ends connections, IPv4 and
# IPv6 (no pattern matches here; every connection crosses the stage):
#   - half-close: the client sends, shuts down its side, and only then the
#     server answers 1 MiB: it all arrives, both ends see EOF;
#   - 32 connections at once, 64 KiB + 1 each way: all byte-exact;
#   - a client that aborts (RST) mid-stream: the server sees a reset;
#   - a client that half-closes (FIN) and then aborts (RST): the server sees
#     EOF and then a reset; likewise a server that half-closes and aborts:
#     the client sees EOF and then a reset;
#   - a server that aborts without FIN: the client sees a reset;
#   - no server listening: the client is reset, gets no data;
#   - the server closes first, the client closes after its EOF and
#     reconnects at once from the same port: the new connection works (the
#     stage's client-side socket of the old one would be in TIME_WAIT; the
#     stage removes it when the relay ends);
#   - the mirror: the client closes first, the server (without TCP
#     timestamps) after its EOF, and the client reconnects from the same
#     port: the new connection works (the stage's server-side socket would be
#     in TIME_WAIT, and its new server leg could not connect from the tuple);
#   - both close at once (the client's FIN does not acknowledge the stage's,
#     which is held back): the stage's socket is in CLOSING when the relay
#     ends and in TIME_WAIT only later; the reconnect works all the same;
#   - after each, the stage has left no TIME_WAIT socket of those tuples.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/inspect_lib.sh"
it_init inspect_lifecycle ilc
it_need_root_and_bpf
ins_need_stage
it_topology_up
ins_write_config "$IT_TMP/fw.yaml" <<'YAML'
        - { name: never, regex: 'sluice-never-[0-9]{12}-never', direction: both, action: reject }
YAML
it_sluice_start "$IT_TMP/fw.yaml"

# ticks: the daemon's CPU time (clock ticks, all its threads), for the log.
ticks() { awk '{print $14 + $15}' "/proc/$SLUICE_PID/stat" 2>/dev/null; }

for fam in 4 6; do
    dst=$(ins_dst $fam)
    ins_tcp_server wan "$dst" 8080 "answer$fam" --send-after-eof --send r:1048576:9 --idle 6
    ins_tcp_server wan "$dst" 8081 "sink$fam" --idle 8 --watch-after-eof 4
    ins_tcp_server wan "$dst" 8082 "fin-rst$fam" --send 't:hello' --shut --reset-after 1
    ins_tcp_server wan "$dst" 8083 "rst$fam" --send 't:hello' --reset-after 1
    ins_tcp_server wan "$dst" 8084 "closer$fam" --send 't:bye' --shut --idle 6
    ins_tcp_server wan "$dst" 8085 "many$fam" --send r:65537:5 --idle 8
    ins_tcp_server wan "$dst" 8086 "after-eof$fam" --send-after-eof --send 't:pong' --idle 6
done

conns0=$(ins_counter "" connections)
expected_conns=0
for fam in 4 6; do
    dst=$(ins_dst $fam)
    v="IPv$fam"

    # --- half-close, then the answer ----------------------------------------------
    ins_tcp_client "half$fam" "$dst" 8080 --send r:100000:8 --idle 6
    c="$IT_TMP/half$fam.json"
    s=$(ins_server_result "answer$fam" "half$fam")
    it_expect_eq "$v half-close: the server got the request, then EOF" "100000 $(ins_sha r:100000:8) eof" \
        "$(jf "$s" recv_len recv_sha256 recv_end)"
    it_expect_eq "$v half-close: the answer sent after the client's EOF arrived whole, then EOF" \
        "1048576 $(ins_sha r:1048576:9) eof" "$(jf "$c" recv_len recv_sha256 recv_end)"
    expected_conns=$((expected_conns + 1))

    # --- many at once ------------------------------------------------------------------
    pids=()
    for i in $(seq 32); do
        ins_tcp_client_bg "many$fam-$i" "$dst" 8085 --send "r:65537:$((100 + i))" --idle 8
        pids+=("$IT_LAST_PID")
    done
    ins_wait_all "${pids[@]}"
    bad=0
    want_s2c="65537 $(ins_sha r:65537:5) eof"
    for i in $(seq 32); do
        c="$IT_TMP/many$fam-$i.json"
        s=$(ins_server_result "many$fam" "many$fam-$i")
        if [ "$(jf "$c" recv_len recv_sha256 recv_end)" != "$want_s2c" ] ||
            [ "$(jf "$s" recv_len recv_sha256 recv_end)" != "65537 $(ins_sha "r:65537:$((100 + i))") eof" ]; then
            bad=$((bad + 1))
            echo "    connection $i: client $(jf "$c" connect recv_len recv_end), server $(jf "$s" recv_len recv_end)"
        fi
    done
    it_expect_eq "$v 32 concurrent connections, 64 KiB + 1 each way: all byte-exact" 0 "$bad"
    expected_conns=$((expected_conns + 32))

    # --- client aborts mid-stream ----------------------------------------------------
    ins_tcp_client "crst$fam" "$dst" 8081 --send 't:hello' --no-shut --reset-after 1
    s=$(ins_server_result "sink$fam" "crst$fam")
    it_expect_eq "$v client RST mid-stream: the server got the data, then a reset" "hello reset" \
        "$(cat "${s%.json}.recv" 2>/dev/null) $(jf "$s" recv_end)"
    expected_conns=$((expected_conns + 1))

    # --- client half-closes, then aborts ------------------------------------------------
    t0=$(ticks)
    ins_tcp_client "cfinrst$fam" "$dst" 8081 --send 't:hello' --reset-after 1
    s=$(ins_server_result "sink$fam" "cfinrst$fam")
    it_expect_eq "$v client FIN then RST: the server got the data, EOF, then a reset" "hello eof-then-reset" \
        "$(cat "${s%.json}.recv" 2>/dev/null) $(jf "$s" recv_end)"
    it_log "  (daemon CPU while the server watched for the reset: $(($(ticks) - t0)) ticks)"
    expected_conns=$((expected_conns + 1))

    # --- server half-closes, then aborts --------------------------------------------
    t0=$(ticks)
    ins_tcp_client "sfinrst$fam" "$dst" 8082 --send 't:hi' --no-shut --idle 6 --watch-after-eof 4
    c="$IT_TMP/sfinrst$fam.json"
    it_expect_eq "$v server FIN then RST: the client got the data, EOF, then a reset" "hello eof-then-reset" \
        "$(cat "$c.recv" 2>/dev/null) $(jf "$c" recv_end)"
    it_log "  (daemon CPU while the client watched for the reset: $(($(ticks) - t0)) ticks)"
    expected_conns=$((expected_conns + 1))

    # --- server aborts without FIN ------------------------------------------------------
    ins_tcp_client "srst$fam" "$dst" 8083 --send 't:hi' --no-shut --idle 6
    c="$IT_TMP/srst$fam.json"
    it_expect_eq "$v server RST: the client got the data, then a reset" "hello reset" \
        "$(cat "$c.recv" 2>/dev/null) $(jf "$c" recv_end)"
    expected_conns=$((expected_conns + 1))

    # --- nobody listening ----------------------------------------------------------------
    ins_tcp_client "none$fam" "$dst" 8089 --send 't:anyone?' --idle 6
    c="$IT_TMP/none$fam.json"
    read -r connect recv_end recv_len <<<"$(jf "$c" connect recv_end recv_len)"
    if [ "$connect" = refused ] || [ "$connect" = reset ] || { [ "$connect" = ok ] && [ "$recv_end" = reset ]; }; then
        it_pass "$v no server: the client was refused or reset ($connect${recv_end:+ / $recv_end})"
    else
        it_fail "$v no server: the client was refused or reset" "connect $connect, then $recv_end"
    fi
    it_expect_eq "$v no server: the client got no data" "" "$(cat "$c.recv" 2>/dev/null)"
    expected_conns=$((expected_conns + 1))
done
it_expect_eq "the stage took every connection" "$expected_conns" "$(($(ins_counter "" connections) - conns0))"

# --- the same client port again at once ------------------------------------------
# The side that closes first ends in TIME_WAIT. When that is one of the stage's
# sockets, its tuple is the client's: left in place, a new SYN from the same
# client port would be handed to the listener and dropped (the listener cannot
# hash a connection over the TIME_WAIT entry), and the stage's bind+connect of
# a new server leg from that port would depend on TCP timestamps. The stage
# removes such TIME_WAIT sockets when a relay ends (inspect/time_wait.h).

# stage_time_wait PORT: TIME_WAIT sockets in the firewall's namespace (only
# the stage has sockets there) with PORT at either end.
stage_time_wait() { fw ss -Htan state time-wait "( sport = :$1 or dport = :$1 )" | wc -l; }
no_stage_time_wait() { [ "$(stage_time_wait "$1")" -eq 0 ]; }

# reuse_pair NAME FAMILY SERVERNAME PORT LOCALPORT WANT_C2S WANT_S2C CLIENT-ARGS...:
# two connections from LOCALPORT, the second as soon as the server has
# recorded the first; both must carry WANT_C2S / WANT_S2C (pieces) whole.
reuse_pair() {
    local name=$1 fam=$2 server=$3 port=$4 lport=$5 c2s=$6 s2c=$7
    shift 7
    local v="IPv$fam" n c s
    for n in 1 2; do
        ins_tcp_client "$name$n-$fam" "$(ins_dst "$fam")" "$port" --local-port "$lport" --send "$c2s" "$@"
        c="$IT_TMP/$name$n-$fam.json"
        s=$(ins_server_result "$server" "$name$n-$fam")
        it_expect_eq "$v $name, connection $n from port $lport: the client got the answer whole, then EOF" \
            "ok $lport $(ins_sha "$s2c") eof" "$(jf "$c" connect local_port recv_sha256 recv_end)"
        it_expect_eq "$v $name, connection $n from port $lport: the server got the request whole, then EOF" \
            "$(ins_sha "$c2s") eof" "$(jf "$s" recv_sha256 recv_end)"
        # The server names its record by client port: the next one reuses it.
        [ -n "$s" ] && mv "$s" "$s.$n"
        # (for the log: a SYN that met a TIME_WAIT the stage had not removed
        # yet is dropped, and its retransmission counts here)
        [ "$n" = 2 ] && it_log "  ($v $name: connection 2 retransmitted $(jf "$c" total_retrans) segments)"
    done
    if it_wait_for "no TIME_WAIT of port $lport in the stage" 50 no_stage_time_wait "$lport" >/dev/null; then
        it_pass "$v $name: the stage left no TIME_WAIT socket of port $lport"
    else
        it_fail "$v $name: the stage left no TIME_WAIT socket of port $lport" \
            "$(stage_time_wait "$lport") left: $(fw ss -Htan state time-wait "( sport = :$lport or dport = :$lport )" | tr -s ' \n' ' ')"
    fi
}

# hold_stage_fin PORT: on the LAN host, the firewall's FINs to client port
# PORT are dropped until the client has sent a FIN from that port. The
# client's FIN then does not acknowledge the stage's, so the stage's socket
# goes from FIN_WAIT1 to CLOSING, and reaches TIME_WAIT only when the stage's
# retransmitted FIN is acknowledged, after the relay has ended.
hold_stage_fin() {
    lan nft -f - <<EOF
table inet sluice-it-hold-fin-$1 {
    set fin_sent { type inet_service; flags dynamic; }
    chain out {
        type filter hook output priority 0;
        tcp sport $1 tcp flags & fin == fin add @fin_sent { tcp sport }
    }
    chain in {
        type filter hook input priority 0;
        tcp dport $1 tcp flags & fin == fin tcp dport != @fin_sent counter drop
    }
}
EOF
}
# held_stage_fins PORT: how many FINs hold_stage_fin dropped.
held_stage_fins() {
    lan nft list chain inet "sluice-it-hold-fin-$1" in | awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

conns0=$(ins_counter "" connections)
for fam in 4 6; do
    # The server writes "bye" and shuts down its side at once; the client
    # reads to EOF and only then closes: the stage's client-side socket does
    # the active close (TIME_WAIT), the client's own does not.
    reuse_pair server-closes-first "$fam" "closer$fam" 8084 $((31000 + fam)) 't:hi' 't:bye' --no-shut --idle 6
    # The client writes "ping" and shuts down its side; the server answers
    # after that EOF and closes: the stage's server-side socket does the
    # active close. bind()+connect() over a TIME_WAIT of the same tuple
    # succeeds only when the old connection had TCP timestamps: the server
    # turns them off for this case, so that the stage's new server leg needs
    # the old TIME_WAIT gone. (The client's own TIME_WAIT, on the client
    # leg, keeps timestamps: the client can bind and connect again.)
    wan_ts=$(wan sysctl -n net.ipv4.tcp_timestamps)
    wan sysctl -qw net.ipv4.tcp_timestamps=0
    reuse_pair client-closes-first "$fam" "after-eof$fam" 8086 $((31100 + fam)) 't:ping' 't:pong' --idle 6
    wan sysctl -qw net.ipv4.tcp_timestamps="$wan_ts"
    # Both close at once: the server writes "bye" and shuts down its side;
    # the client, once "bye" arrived, writes "hi" and shuts down its side
    # without having seen the stage's FIN (held back). When the relay ends,
    # the stage's client-side socket is in CLOSING, not yet TIME_WAIT: the
    # stage removes the TIME_WAIT once it appears. (--pause 0.2: the client
    # writes "hi" and waits a little before its FIN, so that the stage's FIN,
    # sent right after "bye", is out first; the log line below tells.)
    lport=$((31200 + fam))
    hold_stage_fin "$lport"
    reuse_pair both-close-at-once "$fam" "closer$fam" 8084 "$lport" 't:hi' 't:bye' --send-after-recv --pause 0.2 \
        --idle 6
    it_log "  (IPv$fam both-close-at-once: stage FINs held back until the client's FIN: $(held_stage_fins "$lport");" \
        "0 would mean the client's FIN came first and the stage's socket never was in CLOSING)"
done
it_expect_eq "the stage took every reconnection" 12 "$(($(ins_counter "" connections) - conns0))"
it_expect_eq "no stage errors" "0" "$(ins_counter "" stage_errors)"
it_finish
