# Helpers shared by the inspection operations tests (test_inspect_reload.sh,
# test_inspect_failmode.sh, test_inspect_counters.sh, test_inspect_handoff.sh): inspect_flows.py
# servers and clients, short connections, UDP exchanges. Sourced after lib.sh.
FLOWS="$IT_DIR/inspect_flows.py"

# flows_server NAME NS ADDR PORT [ARGS...]: an inspect_flows.py TCP server in
# <P>-NS; commands through $IT_TMP/NAME.ctl, answers and events in NAME.ev,
# each connection's bytes in NAME.data/CLIENTPORT.bin.
flows_server() {
    local name=$1 ns=$2 addr=$3 port=$4
    shift 4
    mkfifo "$IT_TMP/$name.ctl"
    mkdir -p "$IT_TMP/$name.data"
    it_bg "$name" ip netns exec "$P-$ns" "$IT_PY" "$FLOWS" server --bind "$addr" --port "$port" \
        --ready "$IT_TMP/$name.ready" --log "$IT_TMP/$name.ev" --control "$IT_TMP/$name.ctl" \
        --data-dir "$IT_TMP/$name.data" "$@"
    it_wait_for "server $name" 50 test -f "$IT_TMP/$name.ready" || {
        echo "FAIL: $IT_NAME: server $name did not start"; cat "$IT_TMP/$name.log"; exit 1; }
}
# flows_udp_echo NAME NS ADDR PORT [ARGS...]
flows_udp_echo() {
    local name=$1 ns=$2 addr=$3 port=$4
    shift 4
    it_bg "$name" ip netns exec "$P-$ns" "$IT_PY" "$FLOWS" udp-echo --bind "$addr" --port "$port" \
        --ready "$IT_TMP/$name.ready" --log "$IT_TMP/$name.ev" "$@"
    it_wait_for "udp echo $name" 50 test -f "$IT_TMP/$name.ready" || {
        echo "FAIL: $IT_NAME: udp echo $name did not start"; cat "$IT_TMP/$name.log"; exit 1; }
}
# flows_client NAME ADDR PORT: a long-lived connection from the LAN host,
# waits until it connected (or failed to).
flows_client() {
    local name=$1 addr=$2 port=$3
    mkfifo "$IT_TMP/$name.ctl"
    it_bg "$name" ip netns exec "$P-lan" "$IT_PY" "$FLOWS" client --host "$addr" --port "$port" \
        --control "$IT_TMP/$name.ctl" --log "$IT_TMP/$name.ev"
    it_wait_for "client $name" 50 grep -qs '^\(port\|connect-failed\) ' "$IT_TMP/$name.ev"
}
# cport NAME: the client's local port (the server names its connection by it); 0 if none.
cport() { awk '/^port /{p=$2} END{print p+0}' "$IT_TMP/$1.ev" 2>/dev/null || echo 0; }
# wan_addr 4|6: the WAN host's address.
wan_addr() { if [ "$1" = 4 ]; then echo "$WAN4"; else echo "$WAN6"; fi; }
lan_addr() { if [ "$1" = 4 ]; then echo "$LAN4"; else echo "$LAN6"; fi; }
# fctl NAME COMMAND...: one command to a client or server; prints the answer.
fctl() { local n=$1; shift; "$IT_PY" "$FLOWS" ctl --control "$IT_TMP/$n.ctl" --log "$IT_TMP/$n.ev" "$@"; }
# fok NAME COMMAND...: the same, quiet; succeeds when the answer is "ok".
fok() { fctl "$@" >/dev/null; }
# tcp_once ADDR PORT SPEC...: one short connection; prints its end (eof, reset, ...).
tcp_once() {
    local addr=$1 port=$2 a=() s
    shift 2
    for s in "$@"; do a+=(--send "$s"); done
    lan "$IT_PY" "$FLOWS" tcp --host "$addr" --port "$port" --timeout 3 "${a[@]}" | awk '{print $1}'
}
# udp_send ADDR PORT SPORT SPEC...: datagrams from the LAN host; one word each.
udp_send() {
    local addr=$1 port=$2 sport=$3 a=() s
    shift 3
    for s in "$@"; do a+=(--send "$s"); done
    lan "$IT_PY" "$FLOWS" udp --host "$addr" --port "$port" --sport "$sport" --timeout 1 "${a[@]}"
}
# insp FILE RULESET PATH: a value of a `show inspect --json` snapshot; RULESET
# "-" for the top level; PATH dotted, list items by name (patterns.y-pat.matches).
insp() {
    "$IT_PY" - "$@" <<'EOF'
import json, sys
path, rs, key = sys.argv[1:4]
obj = json.load(open(path))
if rs != "-":
    obj = next((r for r in obj["rulesets"] if r["name"] == rs), None)
for k in key.split(".") if obj is not None else []:
    if isinstance(obj, list):
        obj = next((x for x in obj if isinstance(x, dict) and x.get("name") == k), None)
    elif isinstance(obj, dict):
        obj = obj.get(k)
    else:
        obj = None
    if obj is None:
        break
if obj is None:
    print("missing")
elif isinstance(obj, bool):
    print(str(obj).lower())
elif isinstance(obj, (dict, list)):
    print(json.dumps(obj))
else:
    print(obj)
EOF
}
word() { echo "$1" | awk "{print \$$2}"; }

# Counter snapshots: snap LABEL saves `show inspect --json` and `show stats
# --json`; idelta A B RULESET PATH and sdelta A B STAT are the changes from
# snapshot A to B.
snap() {
    sluice_fw show inspect --json >"$IT_TMP/$1.insp" 2>"$IT_TMP/$1.insp.err"
    sluice_fw show stats --json >"$IT_TMP/$1.stats" 2>"$IT_TMP/$1.stats.err"
}
# A value that is not a number (a renamed or absent field: "missing") makes
# the delta "unreadable(...)", so no comparison can pass by accident.
num_delta() {
    if [[ $1 =~ ^-?[0-9]+$ && $2 =~ ^-?[0-9]+$ ]]; then echo $(($2 - $1)); else echo "unreadable($1,$2)"; fi
}
idelta() { num_delta "$(insp "$IT_TMP/$1.insp" "$3" "$4")" "$(insp "$IT_TMP/$2.insp" "$3" "$4")"; }
sdelta() { num_delta "$(stat_value "$IT_TMP/$1.stats" "$3")" "$(stat_value "$IT_TMP/$2.stats" "$3")"; }
# spec_sha SPEC...: SHA-256 of the pieces as inspect_flows.py sends them, in order.
spec_sha() {
    "$IT_PY" -c 'import hashlib, sys; sys.path.insert(0, sys.argv[1]); from inspect_flows import payload
print(hashlib.sha256(b"".join(payload(s) for s in sys.argv[2:])).hexdigest())' "$IT_DIR" "$@"
}
