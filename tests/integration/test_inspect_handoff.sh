#!/usr/bin/env bash
# TCP inspect-bytes: a connection whose inspected directions passed the limit
# is handed to the fast path in the middle of a bulk transfer (the stage holds
# new data back, drains, and XDP renumbers the rest), without and with source
# NAT, IPv4 and IPv6:
#   - iperf3 upload (ruleset `up`: client-to-server patterns) and download
#     (-R, ruleset `down`: server-to-client patterns): the transfer completes,
#     its data connection is handed off (handoffs), the stage scanned a small
#     part of what was sent, nothing was refused; with NAT the server saw the
#     firewall's address;
#   - 3 MB up, then 2 MB down on one connection (ruleset `up`): both arrive
#     byte-exact (SHA-256), the session carries the later packets
#     (tcp-spliced-after-inspection), then both ends see EOF.
source "$(dirname "$0")/lib.sh"
it_init inspect_handoff iho
it_need_root_and_bpf
command -v iperf3 >/dev/null || it_skip_bpf "iperf3 is not installed (scripts/setup.sh installs it)"
it_topology_up
source "$IT_DIR/inspect_flows_lib.sh"


# write_config FILE [NAT-YAML]
write_config() {
    it_write_topology_config "$1"
    cat >>"$1" <<'EOF'
applications:
  up-tcp: { protocol: tcp, destination-port: [5201-5209] }
  down-tcp: { protocol: tcp, destination-port: [5211-5219] }
policies:
  - { name: p-up, from: trust, to: untrust, application: [up-tcp], action: { inspect: up } }
  - { name: p-down, from: trust, to: untrust, application: [down-tcp], action: { inspect: down } }
default-action: deny
inspect:
  rulesets:
    up:
      inspect-bytes: 64KiB
      patterns:
        - { name: never, regex: 'sluice-never-[0-9]{12}-match', direction: client-to-server, action: reject }
    down:
      inspect-bytes: 64KiB
      patterns:
        - { name: never, regex: 'sluice-never-[0-9]{12}-match', direction: server-to-client, action: reject }
EOF
    if [ -n "${2:-}" ]; then printf '%s\n' "$2" >>"$1"; fi
}

# iperf_run FAMILY PORT LABEL [iperf3 client args...]: "BYTES GBPS SERVER-SAW-ADDRESS"
iperf_run() {
    local fam=$1 port=$2 label=$3 dst server_pid
    shift 3
    dst=$(wan_addr "$fam")
    it_bg "iperf3-server-$label" wan iperf3 -s -1 -B "$dst" -p "$port" -J --logfile "$IT_TMP/$label-server.json"
    server_pid=$IT_LAST_PID
    it_wait_for "iperf3 server on $port" 50 sh -c "ip netns exec $P-wan ss -ltn | grep -q ':$port '"
    lan iperf3 -c "$dst" -p "$port" -t 2 -J "$@" >"$IT_TMP/$label-client.json" 2>"$IT_TMP/$label-client.err"
    it_wait_for "iperf3 server exit" 50 sh -c "! kill -0 $server_pid 2>/dev/null"
    it_forget_pid "$server_pid"
    "$IT_PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
if "error" in c:
    print("0 0 error:" + c["error"].replace(" ", "_"))
    sys.exit()
recv = c["end"]["sum_received"]
print("%d %.2f %s" % (recv["bytes"], recv["bits_per_second"] / 1e9, s["start"]["connected"][0]["remote_host"]))' \
        "$IT_TMP/$label-client.json" "$IT_TMP/$label-server.json" 2>&1
}

run_phase() {
    local phase=$1 bx_port=$2 f dst src fw_wan out bytes gbps peer
    for f in 4 6; do
        dst=$(wan_addr $f)
        src=$(lan_addr $f)
        if [ "$phase" = nat ]; then
            if [ $f = 4 ]; then fw_wan=198.18.100.1; else fw_wan=2001:2:0:100::1; fi
        else
            fw_wan=$src
        fi
        v="IPv$f $phase"

        # --- iperf3 upload ----------------------------------------------------
        snap "$phase$f-up0"
        out=$(iperf_run $f 5201 "$phase$f-up")
        snap "$phase$f-up1"
        read -r bytes gbps peer <<<"$out"
        it_log "$v iperf3 upload through the hand-off: $bytes bytes, $gbps Gbit/s, server saw $peer"
        it_expect_ge "$v iperf3 upload: bytes received" "${bytes:-0}" 1000000
        it_expect_eq "$v iperf3 upload: the server saw the expected source" "$fw_wan" "$peer"
        it_expect_ge "$v iperf3 upload: the data connection was handed to the fast path" \
            "$(idelta "$phase$f-up0" "$phase$f-up1" up stage.handoffs)" 1
        it_expect_eq "$v iperf3 upload: no hand-off refused" 0 "$(idelta "$phase$f-up0" "$phase$f-up1" up stage.handoff_refused)"
        scanned=$(idelta "$phase$f-up0" "$phase$f-up1" up stage.bytes_client_to_server)
        it_expect_ge "$v iperf3 upload: the stage scanned a small part ($scanned of $bytes bytes; < 1/4)" \
            "$(( ${bytes:-0} / 4 ))" "$scanned"

        # --- iperf3 download ---------------------------------------------------
        snap "$phase$f-down0"
        out=$(iperf_run $f 5211 "$phase$f-down" -R)
        snap "$phase$f-down1"
        read -r bytes gbps peer <<<"$out"
        it_log "$v iperf3 download through the hand-off: $bytes bytes, $gbps Gbit/s, server saw $peer"
        it_expect_ge "$v iperf3 download: bytes received" "${bytes:-0}" 1000000
        it_expect_ge "$v iperf3 download: the data connection was handed to the fast path" \
            "$(idelta "$phase$f-down0" "$phase$f-down1" down stage.handoffs)" 1
        it_expect_eq "$v iperf3 download: no hand-off refused" 0 \
            "$(idelta "$phase$f-down0" "$phase$f-down1" down stage.handoff_refused)"
        scanned=$(idelta "$phase$f-down0" "$phase$f-down1" down stage.bytes_server_to_client)
        it_expect_ge "$v iperf3 download: the stage scanned a small part ($scanned of $bytes bytes; < 1/4)" \
            "$(( ${bytes:-0} / 4 ))" "$scanned"

        # --- byte-exact both ways on one connection ----------------------------
        flows_server "bx$phase$f" wan "$dst" "$bx_port"
        snap "$phase$f-bx0"
        flows_client "BX$phase$f" "$dst" "$bx_port"
        pb=$(cport "BX$phase$f")
        it_expect_ge "$v byte-exact: connected" "$pb" 1
        # The server names the connection by the port it saw (translated under NAT).
        it_wait_for "accept on bx$phase$f" 50 grep -qs '^accept ' "$IT_TMP/bx$phase$f.ev"
        sp=$(awk '/^accept /{p=$2} END{print p+0}' "$IT_TMP/bx$phase$f.ev")
        fok "BX$phase$f" send fill:3000000
        it_check "$v byte-exact: 3 MB client -> server" fok "bx$phase$f" wait "$sp" 3000000 20
        fok "bx$phase$f" send "$sp" fill:2000000
        it_check "$v byte-exact: 2 MB server -> client, byte-exact" fok "BX$phase$f" expect fill:2000000 20
        snap "$phase$f-bx1"
        it_expect_eq "$v byte-exact: handed to the fast path once" 1 "$(idelta "$phase$f-bx0" "$phase$f-bx1" up stage.handoffs)"
        it_expect_ge "$v byte-exact: XDP renumbered the segments after the hand-off" \
            "$(sdelta "$phase$f-bx0" "$phase$f-bx1" tcp-spliced-after-inspection)" 10
        fok "BX$phase$f" shutdown
        st=$(fctl "BX$phase$f" state 5)
        it_expect_eq "$v byte-exact: the client sees EOF" eof "$(word "$st" 2)"
        st=$(fctl "bx$phase$f" end "$sp" 5)
        it_expect_eq "$v byte-exact: the server got every byte in order, then EOF" \
            "eof 3000000 $(spec_sha fill:3000000)" "$(word "$st" 2) $(word "$st" 3) $(word "$st" 4)"
    done
}

cfg="$IT_TMP/fw.yaml"
write_config "$cfg"
it_sluice_start "$cfg"
it_log "without NAT"
run_phase plain 5202

write_config "$cfg" "nat:
  source:
    - { name: lan-out, from: trust, to: untrust, translate: interface }"
if sluice_fw reload >"$IT_TMP/reload.out" 2>&1; then
    it_pass "reload with source NAT"
else
    it_fail "reload with source NAT" "$(cat "$IT_TMP/reload.out")"
fi
it_log "with source NAT (interface)"
run_phase nat 5203
it_finish
