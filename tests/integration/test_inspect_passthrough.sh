#!/usr/bin/env bash
# The inspection stage passes clean TCP data byte-exact, both directions at
# once, IPv4 and IPv6: random payloads of 1 B, 1000 B, 64 KiB + 1, 1 MiB and
# 4 MiB each way (SHA-256 compared at both receivers), and the stage really
# carried them: punt-to-inspection and tc-punt-socket-assigned grow, the
# ruleset counts every connection and exactly the bytes sent each way.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/inspect_lib.sh"
it_init inspect_passthrough ipt
it_need_root_and_bpf
ins_need_stage
it_topology_up
ins_write_config "$IT_TMP/fw.yaml" <<'YAML'
        - { name: never, regex: 'sluice-never-[0-9]{12}-never', direction: both, action: reject }
        - { name: never-drop, regex: 'sluice-not-here-[a-z]{16}', direction: both, action: drop }
YAML
it_sluice_start "$IT_TMP/fw.yaml"

SIZES="1 1000 65537 1048576 4194304"
punted0=$(ins_stat punt-to-inspection)
assigned0=$(ins_stat tc-punt-socket-assigned)
total_c2s=0
total_s2c=0
conns=0
for fam in 4 6; do
    dst=$(ins_dst $fam)
    i=0
    for size in $SIZES; do
        port=$((8080 + i))
        i=$((i + 1))
        c_seed=$((fam * 100 + i))
        s_seed=$((fam * 100 + 50 + i))
        name="v$fam-$size"
        it_log "checking: IPv$fam, $size bytes each way through the stage ([$dst]:$port)"
        ins_tcp_server wan "$dst" "$port" "srv-$name" --send "r:$size:$s_seed" --idle 10
        srv_pid=$IT_LAST_PID
        ins_tcp_client "cli-$name" "$dst" "$port" --send "r:$size:$c_seed" --idle 10
        c="$IT_TMP/cli-$name.json"
        s=$(ins_server_result "srv-$name" "cli-$name")
        want_c2s=$(ins_sha "r:$size:$c_seed")
        want_s2c=$(ins_sha "r:$size:$s_seed")
        # The payloads must not contain a pattern (else the pass case proves nothing).
        ins_payload "$IT_TMP/payload" "r:$size:$c_seed" "r:$size:$s_seed"
        if ins_contains "$IT_TMP/payload" 'sluice-never-[0-9]{12}-never|sluice-not-here-[a-z]{16}'; then
            it_fail "IPv$fam $size: test payload contains a pattern"
        fi
        it_expect_eq "IPv$fam $size B client->server: client sent it all" "$size $want_c2s" "$(jf "$c" sent sent_sha256)"
        it_expect_eq "IPv$fam $size B client->server: server received it byte-exact, then EOF" \
            "$size $want_c2s eof" "$(jf "$s" recv_len recv_sha256 recv_end)"
        it_expect_eq "IPv$fam $size B server->client: server sent it all" "$size $want_s2c" "$(jf "$s" sent sent_sha256)"
        it_expect_eq "IPv$fam $size B server->client: client received it byte-exact, then EOF" \
            "$size $want_s2c eof" "$(jf "$c" recv_len recv_sha256 recv_end)"
        total_c2s=$((total_c2s + size))
        total_s2c=$((total_s2c + size))
        conns=$((conns + 1))
        it_stop "$srv_pid"
        it_forget_pid "$srv_pid"
    done
done

punted1=$(ins_stat punt-to-inspection)
assigned1=$(ins_stat tc-punt-socket-assigned)
# Every byte crossed as punted packets: far more than one per connection.
it_expect_ge "punt-to-inspection grew by at least one packet per MSS sent" "$((punted1 - punted0))" \
    "$(((total_c2s + total_s2c) / 65536))"
it_expect_ge "tc-punt-socket-assigned grew" "$((assigned1 - assigned0))" "$((conns * 2))"
it_expect_eq "the ruleset counted every connection" "$conns" "$(ins_counter "" connections)"
it_expect_eq "the ruleset scanned exactly the bytes sent client->server" "$total_c2s" "$(ins_counter "" bytes_client_to_server)"
it_expect_eq "the ruleset scanned exactly the bytes sent server->client" "$total_s2c" "$(ins_counter "" bytes_server_to_client)"
it_expect_eq "no pattern matched" "0" "$(ins_counter "" matches)"
it_expect_eq "no stage errors" "0" "$(ins_counter "" stage_errors)"
it_finish
