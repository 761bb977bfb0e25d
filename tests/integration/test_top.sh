#!/usr/bin/env bash
# `sluice top` (docs/operations.md "Live view") against real traffic:
#   - `top --interval 1 --count 3 --json` while the LAN host keeps sending
#     denied (udp/6000) and permitted (udp/5000) datagrams: 3 JSON lines, a
#     sample shows drop-policy-deny with packets/s > 0 (and bytes/s), it is
#     among top_drops, forward moves, and the permitted flow is a session;
#   - `top --json` running until SIGINT across a known flood of 2000 denied
#     datagrams: the samples' drop-policy-deny packets add up to exactly 2000,
#     and Ctrl-C ends it with status 0;
#   - text mode into a pipe: samples one after another, no terminal escapes;
#   - a non-existent instance: exit 1 and an error naming it; an instance
#     taken down (`sluice down`) while top runs: exit 1.
# Nothing here compares a duration: top's own clock only divides.
source "$(dirname "$0")/lib.sh"
it_init top tp
it_need_root_and_bpf
it_topology_up

cfg="$IT_TMP/fw.yaml"
it_write_topology_config "$cfg"
cat >>"$cfg" <<EOF
applications:
  open-udp: { protocol: udp, destination-port: 5000 }
  closed-udp: { protocol: udp, destination-port: 6000 }
policies:
  - { name: lan-out, from: trust, to: untrust, source: [lan-net], application: [open-udp], action: permit }
  - { name: lan-deny, from: trust, to: untrust, application: [closed-udp], action: deny }
default-action: deny
EOF
it_sluice_start "$cfg"

# The LAN host's sender: udp/6000 (denied) and/or udp/5000 (permitted), one
# socket each (one flow each), 100-byte payloads, a datagram per millisecond
# or so. Sends COUNT of each, or with COUNT 0 until the file STOP exists;
# creates READY after its first datagrams, writes how many it sent to DONE.
cat >"$IT_TMP/sender.py" <<'EOF'
import os, socket, sys, time
host, ports, count, stop, done, ready = sys.argv[1], [int(p) for p in sys.argv[2].split(",")], int(sys.argv[3]), *sys.argv[4:7]
socks = [(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), p) for p in ports]
n = 0
while (count and n < count) or (not count and not os.path.exists(stop)):
    for s, p in socks:
        s.sendto(b"x" * 100, (host, p))
    n += 1
    if n == 1:
        open(ready, "w").close()
    time.sleep(0.001)
with open(done, "w") as f:
    f.write(str(n))
EOF
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
has_lines() { [ "$(lines "$1")" -ge "$2" ]; }
exited() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -z "$st" ] || [[ $st == Z* ]]; }
no_escapes() { ! grep -qP '\x1b' "$1"; }

# --- 1. --count 3 --json while traffic flows ---------------------------------
it_bg sender1 ip netns exec "$P-lan" "$IT_PY" "$IT_TMP/sender.py" "$WAN4" 6000,5000 0 "$IT_TMP/stop1" "$IT_TMP/done1" "$IT_TMP/ready1"
sender1=$IT_LAST_PID
it_wait_for "sender 1 sending" 150 test -f "$IT_TMP/ready1"
# The sender goes on until top has printed its samples: each one sees it.
"$SLUICE" --netns "$P-fw" top --interval 1 --count 3 --json >"$IT_TMP/top1.json" 2>"$IT_TMP/top1.err"
rc=$?
touch "$IT_TMP/stop1"
it_wait_for "sender 1 done" 100 test -s "$IT_TMP/done1"
it_stop "$sender1"
it_forget_pid "$sender1"
it_expect_eq "top --count 3 --json exits 0" 0 "$rc"
[ -s "$IT_TMP/top1.err" ] && sed 's/^/  top stderr: /' "$IT_TMP/top1.err"
it_expect_eq "three samples, one JSON line each" 3 "$(lines "$IT_TMP/top1.json")"
it_log "sender 1 sent $(cat "$IT_TMP/done1" 2>/dev/null) datagrams per port"

check1() {   # check1 WHAT: one property of the --count 3 output
    "$IT_PY" - "$IT_TMP/top1.json" "$1" <<'EOF'
import json, sys
path, what = sys.argv[1], sys.argv[2]
samples = [json.loads(l) for l in open(path) if l.strip()]
def rate(s, reason):
    return next((r for r in s["rates"] if r["reason"] == reason), None)
if what == "shape":
    for s in samples:
        assert set(s) == {"time", "interval_s", "sessions", "rates", "top_drops"}, sorted(s)
        assert s["time"].endswith("Z") and s["interval_s"] > 0, s
        assert {"ipv4", "ipv6", "table"} <= set(s["sessions"]), s["sessions"]
        for r in s["rates"] + s["top_drops"]:
            assert {"reason", "kind", "packets_per_s", "bytes_per_s"} <= set(r), r
            assert r["packets_per_s"] > 0 and r["kind"] in ("drop", "pass", "info"), r
        pps = [r["packets_per_s"] for r in s["rates"]]
        assert pps == sorted(pps, reverse=True), pps
        assert len(s["top_drops"]) <= 5 and all(r["kind"] == "drop" for r in s["top_drops"]), s["top_drops"]
elif what == "deny":
    hits = [s for s in samples if (r := rate(s, "drop-policy-deny")) and r["kind"] == "drop"
            and r["packets_per_s"] > 0 and r["bytes_per_s"] > 0
            and "drop-policy-deny" in [d["reason"] for d in s["top_drops"]]]
    assert hits, samples
elif what == "forward":
    assert any((r := rate(s, "forward")) and r["packets_per_s"] > 0 and r["bytes_per_s"] > 0 for s in samples), samples
elif what == "sessions":
    assert any(s["sessions"]["ipv4"] >= 1 and s["sessions"]["table"]["ipv4"]["entries"] >= 2 for s in samples), samples
elif what == "no-info-in-drops":
    assert all(d["reason"] not in ("forward", "rx") for s in samples for d in s["top_drops"]), samples
EOF
}
it_check "every sample has time, interval_s, sessions, rates (sorted by packets/s), top_drops (drops, at most 5)" check1 shape
it_check "a sample shows drop-policy-deny (kind drop) with packets/s > 0 and bytes/s > 0, and it is in top_drops" check1 deny
it_check "a sample shows the permitted flow's forward rate (packets/s and bytes/s > 0)" check1 forward
it_check "the permitted flow is an IPv4 session (two table entries)" check1 sessions
it_check "top_drops lists no info counters" check1 no-info-in-drops

# --- 2. until Ctrl-C, across exactly 2000 denied datagrams --------------------
it_bg top2 "$SLUICE" --netns "$P-fw" top --interval 1 --json
top2=$IT_LAST_PID
top2_out="$IT_TMP/top2.log"
it_wait_for "top's first sample" 150 has_lines "$top2_out" 1
ip netns exec "$P-lan" "$IT_PY" "$IT_TMP/sender.py" "$WAN4" 6000 2000 "$IT_TMP/stop2" "$IT_TMP/done2" "$IT_TMP/ready2"
it_expect_eq "the sender sent 2000 denied datagrams" 2000 "$(cat "$IT_TMP/done2" 2>/dev/null)"
# Two more samples: the second began after the last datagram was sent.
after_send=$(lines "$top2_out")
it_wait_for "two samples after the flood" 150 has_lines "$top2_out" $((after_send + 2))
kill -INT "$top2"
it_wait_for "top to end on SIGINT" 150 exited "$top2"
if exited "$top2"; then
    wait "$top2"
    rc=$?
    it_forget_pid "$top2"
else
    rc="still running"
fi
it_expect_eq "SIGINT (Ctrl-C) ends top with status 0" 0 "$rc"
sum=$("$IT_PY" - "$top2_out" <<'EOF'
import json, sys
total = 0
for line in open(sys.argv[1]):
    if line.strip():
        for r in json.loads(line)["rates"]:
            if r["reason"] == "drop-policy-deny":
                total += r["packets"]
print(total)
EOF
)
it_expect_eq "the samples' drop-policy-deny packets add up to the 2000 sent" 2000 "$sum"
it_check "the flood's busiest sample has drop-policy-deny first in top_drops" "$IT_PY" -c '
import json, sys
samples = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def deny(s): return next((r["packets"] for r in s["rates"] if r["reason"] == "drop-policy-deny"), 0)
busiest = max(samples, key=deny)
assert busiest["top_drops"][0]["reason"] == "drop-policy-deny", busiest
' "$top2_out"

# --- 3. text mode into a file: one sample after another ----------------------
"$SLUICE" --netns "$P-fw" top --interval 0.2 --count 2 >"$IT_TMP/top3.txt" 2>&1
rc=$?
it_expect_eq "text mode exits 0" 0 "$rc"
it_expect_eq "text mode into a file prints both samples (two 'top drop reasons:' lines)" 2 \
    "$(grep -c '^top drop reasons:' "$IT_TMP/top3.txt")"
it_check "each sample has its header line (instance, sessions, table fill)" \
    grep -q "instance default .* sessions IPv4 [0-9]*, IPv6 [0-9]*  table IPv4 [0-9.]*%" "$IT_TMP/top3.txt"
it_check "no terminal escape sequences when stdout is not a terminal" no_escapes "$IT_TMP/top3.txt"

# --- 4. errors -----------------------------------------------------------------
"$SLUICE" --netns "$P-fw" top --instance no-such-instance --count 1 >"$IT_TMP/top4.out" 2>"$IT_TMP/top4.err"
rc=$?
it_expect_eq "a non-existent instance: exit 1" 1 "$rc"
it_check "... with an error that names it and says nothing is pinned" \
    grep -q "instance no-such-instance has no pinned maps" "$IT_TMP/top4.err"
it_check "... and prints no sample" test ! -s "$IT_TMP/top4.out"
"$SLUICE" --netns "$P-fw" top --count -1 >"$IT_TMP/top6.out" 2>&1
rc=$?
it_check "--count -1 is refused" test "$rc" -ne 0
it_check "... saying what --count takes" grep -q -- '--count: "-1" is not a whole number of 0 or more' "$IT_TMP/top6.out"

it_bg top5 "$SLUICE" --netns "$P-fw" top --interval 0.2 --json
top5=$IT_LAST_PID
it_wait_for "top's first sample" 150 has_lines "$IT_TMP/top5.log" 1
sluice_fw down >/dev/null 2>&1
it_wait_for "top to notice" 150 exited "$top5"
if exited "$top5"; then
    wait "$top5"
    rc=$?
    it_forget_pid "$top5"
else
    rc="still running"
fi
it_expect_eq "the instance taken down under it: top exits 1" 1 "$rc"
# Usually between two samples ("has no pinned maps"); a sample read while
# `down` unpins may instead find the session maps gone.
it_check "... saying the maps are gone" grep -qE "has no pinned maps|no pinned sessions|cannot open pinned map" "$IT_TMP/top5.log"

it_finish
