#!/usr/bin/env bash
# `sluice bench observe --quick` (docs/benchmarks.md, "Observability cost"),
# the plumbing only, no speed thresholds:
#   - the run ends with exit 0 and writes its results (JSON lines) and report;
#   - every configuration (off, on) was measured in both parts, each
#     measurement with its proof: sluice forwarded what arrived; (a)'s
#     windows, all in one sluice start per pass with the configurations
#     switched by reload, off (the reference) between every two others (on,
#     and off again as the control), each preceded by a denied datagram
#     logged (on) or not (off), on's with scrapes answered 200 and the
#     capture running with capture_cfg enabled; (b): for on, flow-log lines
#     for every session; off logged nothing;
#   - the denied probe after each block of (b) was logged (on) or not (off)
#     and captured (on);
#   - (c), the datapath alone: every case of every pass recorded with both
#     halves' ns per packet, what observed logged and captured, and the
#     summary table;
#   - `sluice bench report` renders the goal table from the records alone;
#   - the benchmark leaves no namespace, pin or process of its own behind;
#   - a run without off among the configurations is refused before any lab.
# The benchmark builds and removes its own lab (namespaces b<ob><pid>-*).
source "$(dirname "$0")/lib.sh"
it_init bench-observe bo
it_need_root_and_bpf
for tool in trafgen curl taskset; do
    command -v "$tool" >/dev/null || it_skip "$tool is not installed (scripts/setup.sh installs it)"
done
BUILD=${SLUICE_BUILD_DIR:-$IT_SRC/build}
[ -x "$BUILD/tests/sluice_connrate" ] || it_skip "no $BUILD/tests/sluice_connrate (cmake --build build --target sluice_connrate)"
[ "$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)" = 0 ] ||
    it_skip "kernel.bpf_stats_enabled is 1 (the benchmark refuses to run with it)"

ns_before=$(ip netns list | awk '{print $1}' | grep '^bob[0-9]' | sort)
pins_before=$(ls -d /sys/fs/bpf/sluice/netns/bob[0-9]* 2>/dev/null | sort)

# 1. A refused option list: nothing is built.
out=$("$SLUICE" bench observe --quick --build "$BUILD" --configs on,log --out "$IT_TMP/refused.md" 2>&1)
rc=$?
it_expect_eq "--configs without off is refused" 1 "$rc"
it_check "... saying off must be among them" grep -q "must include off" <<<"$out"

# 2. The smoke run.
it_log "sluice bench observe --quick (about a minute and a half)"
# --quiet-busy 100: the quiet gate lets it through on a busy machine too
# (the numbers are not what this test checks).
"$SLUICE" bench observe --quick --quiet-busy 100 --build "$BUILD" --out "$IT_TMP/observe.md" >"$IT_TMP/run.log" 2>&1 &
IT_PIDS+=($!)
BENCH_PID=$!
wait "$BENCH_PID"
rc=$?
it_forget_pid "$BENCH_PID"
[ "$rc" -eq 0 ] || { tail -n 40 "$IT_TMP/run.log"; }
it_expect_eq "the quick run exits 0" 0 "$rc"
it_check "the report was written" test -s "$IT_TMP/observe.md"
it_check "the results were written" test -s "$IT_TMP/observe.jsonl"

"$IT_PY" - "$IT_TMP/observe.jsonl" "$IT_TMP/paired" <<'EOF'
import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
failures = []
def check(what, ok):
    print(("  ok:   " if ok else "  FAIL: ") + what)
    if not ok:
        failures.append(what)

setup = [r for r in records if r.get("event") == "setup"]
check("one setup record naming off and on", len(setup) == 1 and setup[0].get("configs") == ["off", "on"])
est = [r for r in records if r.get("part") == "established"]
conn = [r for r in records if r.get("part") == "connections"]
probes = [r for r in records if r.get("part") == "probe"]
# --quick: 2 cycles at the fixed rate, 1 unlimited; a cycle measures on and
# off again (the control) once each, each between two off windows (the
# reference): off, X, off, Y, off, ... A fixed-rate window whose rate was
# not held is recorded as discarded.
discarded = [r for r in records if r.get("event") == "discarded"]
def windows(rows, rate):
    return sorted((r["slot"], r["config"], r["role"]) for r in rows if r["rate"] == rate)
def expected(cycles):
    slots = 4 * cycles + 1
    return ([(s, "off", "reference") for s in range(1, slots + 1, 2)],
            sorted([("on", "measured"), ("off", "control")] * cycles))
def matches(got, cycles):
    refs, others = expected(cycles)
    return ([w for w in got if w[0] % 2 == 1] == refs and
            sorted((c, k) for s, c, k in got if s % 2 == 0) == others and
            [s for s, c, k in got] == list(range(1, 4 * cycles + 2)))
check("(a): unlimited, 1 cycle: off, on and off again between off windows",
      matches(windows(est, "unlimited"), 1))
check("(a): fixed rate, 2 cycles, every window measured or discarded",
      matches(windows(est + discarded, "fixed"), 2) and any(r["rate"] == "fixed" for r in est))
check("(a): every window has a clocked CPU time per packet",
      all(r["nonidle_ns_per_packet"] > 0 for r in est))
check("(a): every window received packets and has a CPU time per packet",
      all(r["received_packets"] > 0 and r["softirq_ns_per_packet"] > 0 for r in est))
check("(a): sluice forwarded at least what arrived", all(r["forwarded"] >= 0.99 * r["received_packets"] for r in est))
check("(a) on: the probe before each window logged, scrapes answered",
      all("1 deny line(s)" in r["in_path"] and r["scrapes_ok"] >= 1 for r in est if r["config"] == "on"))
check("(a) off: the probe before each window not logged (the reference and the control)",
      all("no deny line, capture off" in r["in_path"] for r in est if r["config"] == "off"))
check("(a) on: the proof names the capture", all("capture_cfg enabled" in r["in_path"] for r in est if r["config"] == "on"))
check("(b): off and on measured", sorted(r["config"] for r in conn) == ["off", "on"])
check("(b): connections completed, through sluice",
      all(r["completed"] > 0 and r["sessions_created"] >= r["completed"] for r in conn))
on = [r for r in conn if r["config"] == "on"]
check("(b) on: an open and a close line for every connection",
      all(r["flow_log_open"] >= r["sessions_created"] and r["flow_log_close"] >= 0.99 * r["flow_log_open"] for r in on))
check("(b) off: no flow-log line", all(r["flow_log_lines"] == 0 for r in conn if r["config"] == "off"))
check("a probe after every block of (b)", sorted((r["after"], r["config"]) for r in probes) ==
      [("connections", "off"), ("connections", "on")])
check("on's probes were logged and captured",
      all(r["deny_lines"] >= r["sent"] and (r["captured"] or 0) >= r["sent"] for r in probes if r["config"] == "on"))
check("off's probes were not logged", all(r["deny_lines"] == 0 for r in probes if r["config"] == "off"))
dp = [r for r in records if r.get("part") == "datapath"]
check("(c): 2 passes x 12 cases (both builds)", sorted((r["pass"], r["case"]) for r in dp) ==
      sorted((p, b + k + "_" + f) for p in (1, 2) for b in ("", "tc_")
             for k in ("established", "first_packet", "denied") for f in ("v4", "v6")))
check("(c): each record names its build", all(r["hook"] == ("tc" if r["case"].startswith("tc_") else "xdp") for r in dp))
check("(c): both halves measured", all(r["plain_ns_per_packet"] > 0 and r["observed_ns_per_packet"] > 0 for r in dp))
check("(c): observed logged every first packet and denied SYN, nothing of an established flow",
      all(r["flow_events_read"] == (0 if r["kind"] == "established" else r["observed_runs"]) for r in dp))
check("(c): observed captured every denied SYN and nothing else",
      all(r["capture_records_read"] == (r["observed_runs"] if r["kind"] == "denied" else 0) for r in dp))
check("(c): the summary table, both builds", any(r.get("part") == "datapath_summary" and
      "| XDP build: established TCP, IPv4 |" in r.get("summary_markdown", "") and
      "| TC build: established TCP, IPv4 |" in r.get("summary_markdown", "") for r in records))
check("an end record", any(r.get("event") == "end" for r in records))
# Whether some fixed-rate on window has an off window beside it (the goal
# row's input): a window whose rate was not held is nobody's neighbour.
fixed = {(r["pass"], r["slot"], r["role"]) for r in est if r["rate"] == "fixed"}
paired = any((p, s + d, "reference") in fixed for (p, s, k) in fixed if k == "measured" for d in (-1, 1))
open(sys.argv[2], "w").write("yes" if paired else "no")
sys.exit(1 if failures else 0)
EOF
py_rc=$?
it_expect_eq "the records hold every measurement and its proof" 0 "$py_rc"

report=$("$SLUICE" bench report "$IT_TMP/observe.jsonl" 2>&1)
if [ "$(cat "$IT_TMP/paired")" = yes ]; then
    it_check "bench report renders the goal table again" grep -q "| on | established packets at the fixed rate" <<<"$report"
else
    it_log "no fixed-rate pair in this quick run (its windows' rate was not held): no established goal row expected"
    it_check "bench report renders the fixed-rate table" grep -q "^(a) Established UDP flows" <<<"$report"
fi
it_check "... and the new-connections goal" grep -q "| on | new connections per second: on / off | ≥ 0.90 |" <<<"$report"
it_check "... and the proofs" grep -q "^on connections pass 1: sluice" <<<"$report"
it_check "... and the datapath's goal, per build and family" grep -q "| on | established packets in the datapath (BPF_PROG_TEST_RUN, TC build), IPv6" <<<"$report"

ns_after=$(ip netns list | awk '{print $1}' | grep '^bob[0-9]' | sort)
it_expect_eq "no namespace of the benchmark is left" "$ns_before" "$ns_after"
pins_after=$(ls -d /sys/fs/bpf/sluice/netns/bob[0-9]* 2>/dev/null | sort)
it_expect_eq "no pins of the benchmark are left" "$pins_before" "$pins_after"
it_finish
