# Shared helpers for sluice's integration tests. Source it from a test_*.sh:
#
#   source "$(dirname "$0")/lib.sh"
#   it_init "ping" pg          # name, 2-3 letter tag for the namespace prefix
#   it_need_root_and_bpf       # exit 77 (skipped, with the reason) otherwise
#   it_topology_up [TOPOLOGY]  # <P>-lan, <P>-fw, <P>-wan (sluice cluster up --topology single --bare)
#   it_write_config "$IT_TMP/fw.yaml"; it_sluice_start "$IT_TMP/fw.yaml"
#   it_check "what is checked" some command ...
#   it_finish                  # prints PASS/FAIL and exits 0/1
#
# The EXIT trap always cleans up: background processes this test started are
# stopped by PID, then `sluice cluster down --prefix <P>` runs `sluice down` in
# the firewall and deletes the namespaces.
# Addresses come only from 198.18.0.0/15 and 2001:2::/48.

set -u

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IT_SRC=${SLUICE_SOURCE_DIR:-$(cd "$IT_DIR/../.." && pwd)}
IT_PY=/usr/bin/python3
IT_CHAT="$IT_DIR/tcp_chat.py"

# Topology addresses (userspace/cluster/topology.h).
LAN4=198.18.1.10
LAN6=2001:2:0:1::10
WAN4=198.18.100.200
WAN6=2001:2:0:100::200

IT_NAME=""
IT_PASS=0
IT_FAIL=0
IT_FAILED=()
IT_PIDS=()
IT_TOPOLOGY=0
IT_TMP=""
P=""
SLUICE_PID=""
SLUICE_LOG=""

it_log() { echo "[$IT_NAME] $*"; }

# it_init NAME TAG: names the test, picks the unique namespace prefix
# "it-<pid>-<tag>" and installs the cleanup trap.
it_init() {
    IT_NAME=$1
    P="it-$$-$2"
    if [ ${#P} -gt 12 ]; then   # "<P>-lp" must fit IFNAMSIZ (15 characters)
        echo "lib.sh: prefix $P is too long" >&2
        exit 1
    fi
    IT_TMP=$(mktemp -d "/tmp/sluice-it-$IT_NAME.XXXXXX")
    SLUICE_LOG="$IT_TMP/sluice.log"
    SLUICE=${SLUICE_BIN:-$IT_SRC/build/userspace/sluice}
    trap it_cleanup EXIT
    trap 'exit 1' INT TERM HUP
    it_log "test $IT_NAME (namespace prefix $P, files in $IT_TMP)"
    if [ ! -x "$SLUICE" ]; then
        it_skip "no sluice binary at $SLUICE (set SLUICE_BIN or build into build/)"
    fi
    if [ ! -x "$IT_PY" ]; then
        it_skip "$IT_PY (Debian's python3) is not installed"
    fi
}

it_skip() {
    echo "SKIP: $IT_NAME: $*"
    exit 77
}

# it_skip_bpf REASON: the test cannot run here. A skip, unless
# SLUICE_REQUIRE_BPF=1 (.ci/run, scripts/ci-incus.sh) says this machine runs
# the BPF and namespace tests: then it fails, so CI cannot pass with them
# skipped.
it_skip_bpf() {
    if [ "${SLUICE_REQUIRE_BPF:-0}" = 1 ]; then
        echo "FAIL: $IT_NAME: SLUICE_REQUIRE_BPF=1, but: $*"
        exit 1
    fi
    it_skip "$@"
}

it_need_root_and_bpf() {
    [ "$(id -u)" -eq 0 ] || it_skip_bpf "needs root (network namespaces, BPF)"
    command -v ip >/dev/null || it_skip_bpf "iproute2 (ip) is not installed"
    command -v bpftool >/dev/null || it_skip_bpf "bpftool is not installed"
    if ! mountpoint -q /sys/fs/bpf; then
        mount -t bpf bpf /sys/fs/bpf 2>/dev/null || it_skip_bpf "bpffs cannot be mounted at /sys/fs/bpf"
    fi
    bpftool prog show >/dev/null 2>&1 || it_skip_bpf "the bpf() syscall is unavailable (bpftool prog show failed)"
}

# --- checks -----------------------------------------------------------------

it_pass() {
    IT_PASS=$((IT_PASS + 1))
    echo "  ok:   $1"
}

it_fail() {
    IT_FAIL=$((IT_FAIL + 1))
    IT_FAILED+=("$1")
    echo "  FAIL: $1${2:+ -- $2}"
}

# it_check DESCRIPTION COMMAND...: passes when COMMAND exits 0.
it_check() {
    local desc=$1
    shift
    if "$@"; then it_pass "$desc"; else it_fail "$desc" "command failed: $*"; fi
}

# it_expect_eq DESCRIPTION EXPECTED ACTUAL
it_expect_eq() {
    if [ "$2" = "$3" ]; then it_pass "$1 ($3)"; else it_fail "$1" "expected '$2', got '$3'"; fi
}

# it_expect_ge DESCRIPTION ACTUAL MINIMUM (integers)
it_expect_ge() {
    if [ -n "$2" ] && [ "$2" -ge "$3" ] 2>/dev/null; then
        it_pass "$1 ($2 >= $3)"
    else
        it_fail "$1" "expected >= $3, got '$2'"
    fi
}

it_finish() {
    local total=$((IT_PASS + IT_FAIL))
    if [ "$IT_FAIL" -eq 0 ] && [ "$IT_PASS" -gt 0 ]; then
        echo "PASS: $IT_NAME ($IT_PASS checks)"
        exit 0
    fi
    echo "FAIL: $IT_NAME ($IT_FAIL of $total checks failed)"
    local f
    for f in "${IT_FAILED[@]}"; do echo "  failed: $f"; done
    exit 1
}

# --- checks run side by side -------------------------------------------------
#
# A check whose command mostly waits (a probe expected to time out, a ping
# expected to go unanswered) can run while others wait too:
#
#   it_par_eq "WAN -> fw tcp/22" timeout probe wan "$FW_WAN4" 22 2
#   it_par_check "LAN -> fw ping" ping_ok lan "$FW_LAN4"
#   it_par_wait
#
# it_par_eq / it_par_check start COMMAND (a shell function or a program) in a
# subshell in the background, its stdout and stderr kept in $IT_TMP;
# it_par_wait waits for every check started since the last it_par_wait and
# then records each exactly as it_expect_eq DESC EXPECTED "$(COMMAND)" /
# it_check DESC COMMAND would have, in the order they were started, with the
# commands' output printed in that order too. Only for commands that do not
# depend on each other: no shared source port, no counter read in between,
# no rate limit (screens) that several of them together could reach.
IT_PAR_KIND=()
IT_PAR_DESC=()
IT_PAR_WANT=()
IT_PAR_CMD=()
IT_PAR_PID=()

it_par_eq() {    # DESCRIPTION EXPECTED COMMAND...
    local desc=$1 want=$2
    shift 2
    _it_par_start eq "$desc" "$want" "$@"
}

it_par_check() { # DESCRIPTION COMMAND...
    local desc=$1
    shift
    _it_par_start check "$desc" "" "$@"
}

_it_par_start() {
    local n=${#IT_PAR_PID[@]}
    IT_PAR_KIND+=("$1")
    IT_PAR_DESC+=("$2")
    IT_PAR_WANT+=("$3")
    shift 3
    IT_PAR_CMD+=("$*")
    ("$@") >"$IT_TMP/par-$n.out" 2>"$IT_TMP/par-$n.err" &
    IT_PAR_PID+=("$!")
    IT_PIDS+=("$!")   # stopped by the cleanup if the test ends before it_par_wait
}

it_par_wait() {
    local n rc
    for n in "${!IT_PAR_PID[@]}"; do
        rc=0
        wait "${IT_PAR_PID[$n]}" || rc=$?
        it_forget_pid "${IT_PAR_PID[$n]}"
        if [ "${IT_PAR_KIND[$n]}" = eq ]; then
            cat "$IT_TMP/par-$n.err"
            it_expect_eq "${IT_PAR_DESC[$n]}" "${IT_PAR_WANT[$n]}" "$(cat "$IT_TMP/par-$n.out")"
        else
            cat "$IT_TMP/par-$n.out" "$IT_TMP/par-$n.err"
            if [ "$rc" -eq 0 ]; then
                it_pass "${IT_PAR_DESC[$n]}"
            else
                it_fail "${IT_PAR_DESC[$n]}" "command failed: ${IT_PAR_CMD[$n]}"
            fi
        fi
        rm -f "$IT_TMP/par-$n.out" "$IT_TMP/par-$n.err"
    done
    IT_PAR_KIND=() IT_PAR_DESC=() IT_PAR_WANT=() IT_PAR_CMD=() IT_PAR_PID=()
}

# --- processes --------------------------------------------------------------

# it_bg LOGNAME COMMAND...: starts COMMAND (an executable, not a shell function,
# so that the recorded PID is the process itself) in the background (stdout and stderr
# to $IT_TMP/LOGNAME.log), records its PID for cleanup, sets IT_LAST_PID.
it_bg() {
    local name=$1
    shift
    "$@" >"$IT_TMP/$name.log" 2>&1 &
    IT_LAST_PID=$!
    IT_PIDS+=("$IT_LAST_PID")
}

# it_stop PID: SIGTERM, wait (bounded), SIGKILL if still there. Only PIDs this
# test started.
it_stop() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# it_wait_for DESCRIPTION TRIES COMMAND...: polls COMMAND every 0.2s.
it_wait_for() {
    local desc=$1 tries=$2 i
    shift 2
    for i in $(seq "$tries"); do
        "$@" && return 0
        sleep 0.2
    done
    echo "  (gave up waiting for: $desc)"
    return 1
}

it_cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM HUP
    local i pid
    for ((i = ${#IT_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${IT_PIDS[$i]}
        it_stop "$pid"
    done
    if [ "$IT_TOPOLOGY" = 1 ]; then
        topology_down "$P" 2>&1 | sed "s/^/[$IT_NAME] cleanup: /"
    fi
    # Leftovers of this test's own instance only (its namespace name is unique).
    [ -n "$P" ] && [ -d "/sys/fs/bpf/sluice/netns/$P-fw" ] && rm -rf "/sys/fs/bpf/sluice/netns/$P-fw"
    [ -n "$P" ] && [ -d "/run/sluice/netns/$P-fw" ] && rm -rf "/run/sluice/netns/$P-fw"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -n "$SLUICE_LOG" ] && [ -s "$SLUICE_LOG" ]; then
        echo "--- sluice daemon log ($SLUICE_LOG) ---"
        tail -n 40 "$SLUICE_LOG"
    fi
    [ -n "$IT_TMP" ] && rm -rf "$IT_TMP"
    exit "$rc"
}

# --- topology and sluice ----------------------------------------------------

# it_topology_up [TOPOLOGY]: the lab (default single) from sluice's topology
# builder; cleaned up by the EXIT trap.
it_topology_up() {
    # shellcheck source=../../scripts/lib/topology.sh
    source "$IT_SRC/scripts/lib/topology.sh"
    IT_TOPOLOGY=1
    topology_up "$P" "${1:-single}" || { echo "FAIL: $IT_NAME: sluice cluster up --topology ${1:-single} --prefix $P failed"; exit 1; }
}

# it_pipeline_on NS DEV: sluice's pipeline runs on DEV in namespace NS:
# xdp_main_prog at its XDP hook, or tc_main_prog at its TC ingress (the tc
# mode, what xdp-mode auto picks on veth).
it_pipeline_on() {
    ip -n "$1" -j link show "$2" | grep -q '"name":"xdp_main_prog"' ||
        ip netns exec "$1" tc -j filter show dev "$2" ingress 2>/dev/null | grep -q '"name":"tc_main_prog"'
}

lan() { ip netns exec "$P-lan" "$@"; }
wan() { ip netns exec "$P-wan" "$@"; }
fw() { ip netns exec "$P-fw" "$@"; }
sluice_fw() { "$SLUICE" --netns "$P-fw" "$@"; }

# it_write_topology_config FILE: the interfaces, zones and address book of the
# test topology; callers append applications and policies.
it_write_topology_config() {
    cat >"$1" <<EOF
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
EOF
}

# The standard test policy:
#   lan → wan: permit tcp 8080-8089 and ping; deny tcp 7000; reject tcp/udp 7001;
#   tcp 7002 matches no policy (default deny); wan → lan: deny everything.
it_write_config() {
    local file=$1 extra_ports=${2:-}
    it_write_topology_config "$file"
    cat >>"$file" <<EOF
applications:
  web: { protocol: tcp, destination-port: [8080-8089${extra_ports:+, $extra_ports}] }
  ping: { protocol: icmp }
  blocked: { protocol: tcp, destination-port: 7000 }
  refused: { protocol: tcp, destination-port: 7001 }
  refused-udp: { protocol: udp, destination-port: 7001 }
policies:
  - { name: lan-out, from: trust, to: untrust, source: [lan-net], application: [web, ping], action: permit }
  - { name: lan-deny, from: trust, to: untrust, application: [blocked], action: deny }
  - { name: lan-reject, from: trust, to: untrust, application: [refused, refused-udp], action: reject }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
EOF
}

# it_sluice_start CONFIG: `sluice --netns <P>-fw run -c CONFIG` in the
# background; waits until it logs that it is running. Sets SLUICE_PID.
it_sluice_start() {
    local config=$1
    "$SLUICE" --netns "$P-fw" run -c "$config" >>"$SLUICE_LOG" 2>&1 &
    SLUICE_PID=$!
    IT_PIDS+=("$SLUICE_PID")
    local i
    for i in $(seq 150); do
        if grep -q "running (pid $SLUICE_PID)" "$SLUICE_LOG" 2>/dev/null; then
            it_log "sluice running (pid $SLUICE_PID)"
            return 0
        fi
        if ! kill -0 "$SLUICE_PID" 2>/dev/null; then
            echo "FAIL: $IT_NAME: sluice run exited before it was running; log:"
            cat "$SLUICE_LOG"
            exit 1
        fi
        sleep 0.2
    done
    echo "FAIL: $IT_NAME: sluice run did not report running; log:"
    cat "$SLUICE_LOG"
    exit 1
}

# it_forget_pid PID: drop a PID that has exited from the cleanup list.
it_forget_pid() {
    local keep=() p
    for p in "${IT_PIDS[@]}"; do [ "$p" != "$1" ] && keep+=("$p"); done
    IT_PIDS=("${keep[@]}")
}

# --- traffic helpers ----------------------------------------------------------

# chat NS ARGS...: tcp_chat.py in namespace <P>-NS.
chat() {
    local ns=$1
    shift
    ip netns exec "$P-$ns" "$IT_PY" "$IT_CHAT" "$@"
}

# it_server NS KIND ADDR PORT [ARGS]: starts a tcp_chat.py server (accept-server,
# echo-server, sink) in <P>-NS and waits until it listens. Sets IT_LAST_PID.
it_server() {
    local ns=$1 kind=$2 addr=$3 port=$4
    shift 4
    local ready="$IT_TMP/ready-$kind-$port-${addr//:/_}"
    it_bg "server-$kind-$port-${addr//:/_}" ip netns exec "$P-$ns" "$IT_PY" "$IT_CHAT" "$kind" --bind "$addr" --port "$port" --ready "$ready" "$@"
    it_wait_for "$kind on [$addr]:$port" 50 test -f "$ready" || {
        echo "FAIL: $IT_NAME: $kind on [$addr]:$port did not start"
        cat "$IT_TMP/server-$kind-$port-${addr//:/_}.log"
        exit 1
    }
}

# probe NS ADDR PORT [TIMEOUT]: prints connected | refused | timeout | error ...
probe() { chat "$1" probe --host "$2" --port "$3" --timeout "${4:-3}"; }
udp_probe() { chat "$1" udp-probe --host "$2" --port "$3" --timeout "${4:-3}"; }

# --- chat client (a long-lived TCP connection driven through a FIFO) ----------

# chat_open NAME ADDR PORT: connects a chat-client from the LAN host to an
# echo-server at ADDR:PORT; sets CHAT_PORT_<NAME> (its local port).
chat_open() {
    local name=$1 addr=$2 port=$3
    local fifo="$IT_TMP/chat-$name.ctl" log="$IT_TMP/chat-$name.out"
    mkfifo "$fifo"
    : >"$log"
    it_bg "chat-$name" ip netns exec "$P-lan" "$IT_PY" "$IT_CHAT" chat-client --host "$addr" --port "$port" --control "$fifo" --log "$log"
    # Read-write open never blocks; the fd stays open so the client never sees EOF.
    local fd
    exec {fd}<>"$fifo"
    eval "CHAT_FD_$name=$fd"
    it_wait_for "chat $name connected" 100 grep -q '^port ' "$log" || return 1
    eval "CHAT_PORT_$name=$(awk '/^port /{print $2; exit}' "$log")"
}

chat_answers() { grep -c '^\(done\|fail\) ' "$1"; }
chat_answered_after() { [ "$(chat_answers "$1")" -gt "$2" ]; }

# chat_exchange NAME COUNT SIZE: COUNT echoed messages of SIZE bytes on the
# open connection; succeeds when the client reports them all verified.
chat_exchange() {
    local name=$1 count=$2 size=$3
    local log="$IT_TMP/chat-$name.out" fd
    eval "fd=\$CHAT_FD_$name"
    local seq_before
    seq_before=$(chat_answers "$log")
    echo "exchange $count $size" >&"$fd"
    it_wait_for "chat $name exchange" 300 chat_answered_after "$log" "$seq_before" || return 1
    tail -n 1 "$log" | grep -q '^done ' || { echo "    chat $name: $(tail -n 1 "$log")"; return 1; }
}

# --- JSON helpers -------------------------------------------------------------

# session_field JSONFILE PROTO SRC SPORT DST DPORT FIELD...: prints the fields
# (space separated) of the one session matching the flow, nothing if none.
session_field() {
    "$IT_PY" - "$@" <<'EOF'
import ipaddress, json, sys
path, proto, src, sport, dst, dport, *fields = sys.argv[1:]
d = json.load(open(path))
norm = lambda a: ipaddress.ip_address(a)
hits = [s for s in d["sessions"]
        if s["protocol"] == proto and norm(s["source"]) == norm(src) and norm(s["destination"]) == norm(dst)
        and (sport == "*" or s["source_port"] == int(sport)) and s["destination_port"] == int(dport)]
if len(hits) == 1:
    print(" ".join(str(hits[0][f]) for f in fields))
elif len(hits) > 1:
    print("ambiguous: %d sessions match" % len(hits))
EOF
}

# stat_value JSONFILE COUNTER: one counter of `show stats --json`.
stat_value() {
    "$IT_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"].get(sys.argv[2], "missing"))' "$1" "$2"
}

# ping_ok NS ADDR: a few echo requests from <P>-NS, quiet; 0 if any answered.
ping_ok() { ip netns exec "$P-$1" ping -q -c 3 -i 0.2 -W 2 "$2" >/dev/null 2>&1; }
