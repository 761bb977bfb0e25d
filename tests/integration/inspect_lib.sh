# Shared helpers of the inspection-stage tests (test_inspect_*.sh). Source it
# after lib.sh:
#
#   source "$(dirname "$0")/lib.sh"; source "$(dirname "$0")/inspect_lib.sh"
#   it_init NAME TAG; it_need_root_and_bpf; ins_need_stage
#   it_topology_up
#   ins_write_config "$IT_TMP/fw.yaml" <<'YAML'      # the patterns of ruleset "t"
#         - { name: flag, regex: 'flag\{[a-z]+\}', direction: both, action: reject }
#   YAML
#   it_sluice_start "$IT_TMP/fw.yaml"
#
# The policy punts LAN → WAN TCP 8080-8089 and UDP 5350-5359 to ruleset "t";
# TCP 8090 is permitted without inspection (a control that bypasses the stage).
# Traffic peers are tests/integration/inspect_peer.py (see its docstring).
# The many small questions (a JSON field, does a file match a regex, a
# counter) go to one inspect_peer.py helper process started by
# ins_need_stage (a process each costs seconds on a loaded machine).

INS_PEER="$IT_DIR/inspect_peer.py"
INS_RULESET=t
INS_HELPER_PID=""

# ins_need_stage: skips unless the tools these tests use exist; starts the
# helper process (stopped by PID at cleanup like any other).
ins_need_stage() {
    command -v nft >/dev/null || it_skip "nft (nftables) is not installed"
    "$IT_PY" -c 'import scapy.layers.inet6' 2>/dev/null || it_skip "scapy is not importable from $IT_PY (python3-scapy)"
    coproc INS_HELPER { exec "$IT_PY" "$INS_PEER" helper 2>>"$IT_TMP/helper.log"; }
    IT_PIDS+=("$INS_HELPER_PID")
}

# ins_call REQUEST ARGS...: one helper answer (inspect_peer.py helper_answer)
# on stdout; its status is the answer's.
ins_call() {
    local line="" rc IFS=$'\t'
    # (in a pipeline's or background subshell bash has closed the coproc's
    # descriptors: then a one-shot process answers)
    if [ -n "$INS_HELPER_PID" ] && [ -n "${INS_HELPER[1]:-}" ] &&
        { printf '%s\n' "$*" >&"${INS_HELPER[1]}"; } 2>/dev/null; then
        IFS= read -r line <&"${INS_HELPER[0]}"
    else
        line=$("$IT_PY" "$INS_PEER" helper-once "$@")
    fi
    rc=${line%%$'\t'*}
    printf '%s\n' "${line#*$'\t'}"
    return "${rc:-3}"
}

# ins_write_config FILE: topology, applications, policies; stdin holds the
# YAML lines of the ruleset's patterns (indented by 8). Extra ruleset keys
# (fail-mode, inspect-bytes) may come in INS_RULESET_EXTRA.
ins_write_config() {
    local file=$1
    it_write_topology_config "$file"
    cat >>"$file" <<EOF
applications:
  inspected-tcp: { protocol: tcp, destination-port: [8080-8089] }
  inspected-udp: { protocol: udp, destination-port: [5350-5359] }
  plain-tcp: { protocol: tcp, destination-port: 8090 }
policies:
  - { name: inspect-out, from: trust, to: untrust, source: [lan-net], application: [inspected-tcp, inspected-udp], action: { inspect: $INS_RULESET } }
  - { name: plain-out, from: trust, to: untrust, source: [lan-net], application: [plain-tcp], action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
inspect:
  rulesets:
    $INS_RULESET:
${INS_RULESET_EXTRA:-}      patterns:
EOF
    cat >>"$file"
}

# ins_py ARGS...: inspect_peer.py on the test host (no namespace).
ins_py() { "$IT_PY" "$INS_PEER" "$@"; }

# jf FILE KEY...: top-level fields of a JSON file, space separated ("" for
# one that is absent; all empty when there is no file).
jf() { ins_call jf "$@"; }

# ins_contains FILE REGEX: 0 when FILE's bytes match REGEX (Python re,
# bytes; a missing file does not match).
ins_contains() { ins_call contains "$1" "$2" >/dev/null; }

# ins_expect_absent DESCRIPTION FILE REGEX: passes when FILE (the bytes a
# receiver recorded) exists and does not match REGEX.
ins_expect_absent() {
    ins_call contains "$2" "$3" >/dev/null
    case $? in
    1) it_pass "$1" ;;
    0) it_fail "$1" "$2 matches $3" ;;
    *) it_fail "$1" "no record $2 (the receiver's connection was never recorded)" ;;
    esac
}

# ins_is_prefix SMALL BIG: 0 when file SMALL's bytes are a prefix of file BIG's.
ins_is_prefix() {
    local n
    [ -f "$1" ] && [ -f "$2" ] || return 1
    n=$(stat -c %s "$1")
    [ "$n" -le "$(stat -c %s "$2")" ] && cmp -s -n "$n" "$1" "$2"
}

# ins_sha PIECE...: the sha256 of the pieces' bytes.
ins_sha() { ins_call sha "$@"; }

# ins_payload FILE PIECE...: writes the pieces' bytes to FILE.
ins_payload() { ins_call payload_to "$@" >/dev/null; }

# ins_dst / ins_src FAMILY: the WAN (LAN) host's address of that family (4 or 6).
ins_dst() { if [ "$1" = 4 ]; then echo "$WAN4"; else echo "$WAN6"; fi; }
ins_src() { if [ "$1" = 4 ]; then echo "$LAN4"; else echo "$LAN6"; fi; }

# ins_wait_all PID...: waits for background jobs started with it_bg.
ins_wait_all() {
    local pid
    for pid in "$@"; do
        wait "$pid"
        it_forget_pid "$pid"
    done
}

# --- TCP ------------------------------------------------------------------------

# ins_tcp_server NS ADDR PORT NAME [ARGS]: a tcp-server in <P>-NS writing its
# per-connection results to $IT_TMP/NAME/; waits until it listens.
ins_tcp_server() {
    local ns=$1 addr=$2 port=$3 name=$4
    shift 4
    local ready="$IT_TMP/ready-$name"
    mkdir -p "$IT_TMP/$name"
    it_bg "tcp-server-$name" ip netns exec "$P-$ns" "$IT_PY" "$INS_PEER" tcp-server --bind "$addr" --port "$port" \
        --ready "$ready" --out "$IT_TMP/$name" "$@"
    it_wait_for "tcp server $name" 50 test -f "$ready" || {
        echo "FAIL: $IT_NAME: tcp server $name on [$addr]:$port did not start"
        cat "$IT_TMP/tcp-server-$name.log"
        exit 1
    }
}

# ins_tcp_client NAME HOST PORT [ARGS]: a tcp-client from the LAN host; the
# result is $IT_TMP/NAME.json (bytes received: NAME.json.recv, sent: .sent).
ins_tcp_client() {
    local name=$1 host=$2 port=$3
    shift 3
    lan "$IT_PY" "$INS_PEER" tcp-client --host "$host" --port "$port" --result "$IT_TMP/$name.json" "$@" \
        >"$IT_TMP/$name.out" 2>&1
}

# ins_tcp_client_bg NAME HOST PORT [ARGS]: the same in the background;
# sets IT_LAST_PID (wait for it with ins_wait_all).
ins_tcp_client_bg() {
    local name=$1 host=$2 port=$3
    shift 3
    it_bg "client-$name" ip netns exec "$P-lan" "$IT_PY" "$INS_PEER" tcp-client --host "$host" --port "$port" \
        --result "$IT_TMP/$name.json" "$@"
}

# ins_server_result SERVERNAME CLIENTNAME: waits for the server's record of
# the client's connection; prints its path (empty if it never came).
ins_server_result() {
    local port f
    port=$(jf "$IT_TMP/$2.json" local_port)
    f="$IT_TMP/$1/$port.json"
    [ -n "$port" ] && it_wait_for "server record of $2" 150 test -f "$f" >/dev/null && { echo "$f"; return 0; }
    echo ""
}

# --- counters -------------------------------------------------------------------

ins_counters_file() { echo "/run/sluice/netns/$P-fw/default/inspect-counters"; }

# ins_counter PATTERN FIELD: a counter of ruleset "t" (PATTERN "" = the
# ruleset's own slot) from the stage's shared-memory counters file
# (userspace/inspect/counter_layout.h); 0 if absent.
ins_counter() { ins_call counter "$(ins_counters_file)" "$INS_RULESET" "$1" "$2"; }

# ins_stat NAME: a counter of `sluice show stats --json`.
ins_stat() {
    sluice_fw show stats --json >"$IT_TMP/stats.json" 2>/dev/null
    ins_call stat "$IT_TMP/stats.json" "$1"
}

# --- UDP ------------------------------------------------------------------------

# ins_udp_server NS ADDR PORT NAME [ARGS]: a udp-server logging to $IT_TMP/NAME.log.
ins_udp_server() {
    local ns=$1 addr=$2 port=$3 name=$4
    shift 4
    local ready="$IT_TMP/ready-$name"
    : >"$IT_TMP/$name.log"
    it_bg "udp-server-$name" ip netns exec "$P-$ns" "$IT_PY" "$INS_PEER" udp-server --bind "$addr" --port "$port" \
        --ready "$ready" --log "$IT_TMP/$name.log" "$@"
    it_wait_for "udp server $name" 50 test -f "$ready" || {
        echo "FAIL: $IT_NAME: udp server $name on [$addr]:$port did not start"
        exit 1
    }
}

# ins_udp_client NAME HOST PORT [ARGS]: result in $IT_TMP/NAME.json.
ins_udp_client() {
    local name=$1 host=$2 port=$3
    shift 3
    lan "$IT_PY" "$INS_PEER" udp-client --host "$host" --port "$port" --result "$IT_TMP/$name.json" "$@" \
        >"$IT_TMP/$name.out" 2>&1
}

# ins_udp_seen LOG CLIENTPORT: the sha256 (space separated, in arrival order)
# of the datagrams a udp-server logged from that client port.
ins_udp_seen() { ins_call udp_seen "$1" "$2"; }

# ins_udp_got RESULT: the sha256 of the datagrams a udp-client received.
ins_udp_got() { ins_call udp_got "$1"; }
