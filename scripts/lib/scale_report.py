#!/usr/bin/python3
"""The report of scripts/bench-scale.sh: markdown tables and an SVG chart.

Reads the results file the script writes, one item per line:
  a SYSTEM KIND N PROTO PASS GBPS SENT_GBPS MPPS LOSS_PCT APP_GBPS   (a) iperf3; UDP: GBPS and MPPS
      forwarded (counted at the WAN host's interface), LOSS before the WAN host, APP_GBPS what
      iperf3's server read; TCP: GBPS received, the rest "-"
  b SYSTEM KIND N PASS RATE COMPLETED FAILED P50 P99          (b) short connections
  check PART KIND N PROTO ok|invalid WALL_S COMPILE_MS CLASSIFIER_BYTES   sluice check --json
  load SYSTEM PART/KIND/n=N/PROTO SECONDS                     sluice start / nft -f
  probe PART SYSTEM KIND N PROTO blocked|passed               the last rule's probe
  skip PART SYSTEM KIND N PROTO PASS                          a point left out (config rejected)
and the JSON lines of tests/bench/scale/scale_cost.cpp for (c).
No third-party modules: the SVG is written by hand.
"""
import argparse
import json
import math
import statistics
from collections import defaultdict

SYSTEMS = (("sluice", "sluice"), ("nft-linear", "nft linear"), ("nft-set", "nft sets"))
KINDS = (("src", "source-address rules"), ("port", "destination-port rules"),
         ("mixed", "mixed rules (source host, destination host, destination port in turn)"))
COLOURS = {"sluice": "#1f77b4", "nft-linear": "#d62728", "nft-set": "#2ca02c"}


def spread(values, digits=2):
    v = sorted(values)
    if not v:
        return "–"
    return f"{fmt(statistics.median(v), digits)} ({fmt(v[0], digits)}–{fmt(v[-1], digits)})"


def fmt(x, digits):
    return f"{x:,.{digits}f}".replace(",", " ") if abs(x) >= 10000 else f"{x:.{digits}f}"


def med(values):
    return statistics.median(values) if values else None


def ratios(num, den):
    """Per-pass ratios num[p] / den[p] for the passes both have."""
    return [num[p] / den[p] for p in sorted(den) if p in num and den[p] > 0]


class Data:
    def __init__(self, results, cost):
        # (system, kind, n, proto) -> {pass: (gbps, sent, mpps, loss, app_gbps)}
        self.a = defaultdict(dict)
        # (system, kind, n) -> {pass: (rate, completed, failed, p50, p99)}
        self.b = defaultdict(dict)
        self.check = {}                  # (part, kind, n, proto) -> (status, wall, compile_ms, classifier_bytes)
        self.load = defaultdict(list)    # (system, part, kind, n, proto) -> [seconds]
        self.probes = []                 # (part, system, kind, n, proto, verdict)
        self.skips = set()               # (part, system, kind, n, proto)
        for line in open(results):
            f = line.split()
            if not f:
                continue
            if f[0] == "a":
                opt = [None if x == "-" else float(x) for x in f[8:11]]
                self.a[(f[1], f[2], int(f[3]), f[4])][int(f[5])] = (float(f[6]), float(f[7]), *opt)
            elif f[0] == "b":
                self.b[(f[1], f[2], int(f[3]))][int(f[4])] = (float(f[5]), int(f[6]), int(f[7]), float(f[8]),
                                                              float(f[9]))
            elif f[0] == "check":
                self.check[(f[1], f[2], int(f[3]), f[4])] = (f[5], float(f[6]), f[7], f[8])
            elif f[0] == "load":
                part, kind, n, proto = f[2].split("/")
                self.load[(f[1], part, kind, int(n[2:]), proto)].append(float(f[3]))
            elif f[0] == "probe":
                self.probes.append((f[1], f[2], f[3], int(f[4]), f[5], f[6]))
            elif f[0] == "skip":
                self.skips.add((f[1], f[2], f[3], int(f[4]), f[5]))
        # (c): (kind, n) -> measure -> {pass: iqm_ns}; and compile/apply times
        self.cost = defaultdict(lambda: defaultdict(dict))
        self.cost_mean = defaultdict(lambda: defaultdict(dict))
        self.apply = defaultdict(list)   # (kind, n) -> [(compile_ms, apply_ms)]
        if cost:
            for line in open(cost):
                if not line.strip():
                    continue
                r = json.loads(line)
                kind, n = r["label"].split(":")
                key = (kind, int(n))
                if r["type"] == "cost":
                    self.cost[key][r["measure"]][r["pass"]] = r["iqm_ns"]
                    self.cost_mean[key][r["measure"]][r["pass"]] = r["mean_ns"]
                elif r["type"] == "apply":
                    self.apply[key].append((r["compile_ms"], r["apply_ms"]))

    def systems(self):
        seen = {k[0] for k in self.a} | {k[0] for k in self.b}
        if self.cost:
            seen.add("sluice")
        return [(s, label) for s, label in SYSTEMS if s in seen]

    def kinds(self):
        seen = {k[1] for k in self.a} | {k[1] for k in self.b} | {k[0] for k in self.cost}
        return [(k, label) for k, label in KINDS if k in seen]

    def counts(self, part, kind):
        src = self.a if part == "a" else self.b
        return sorted({k[2] for k in src if k[1] == kind})

    def filter_not_enforced(self, kind=None):
        return sorted({(k, n, proto) for part, system, k, n, proto, verdict in self.probes
                       if part == "a" and system == "sluice" and verdict != "blocked" and kind in (None, k)})


def series_a(d, system, kind, n, proto, index):
    return {p: v[index] for p, v in d.a.get((system, kind, n, proto), {}).items() if v[index] is not None}


def table_values(rows, systems, get, digits, unit_note):
    """rows: counts. get(system, n) -> {pass: value}. Value columns, then
    ratio columns to the same system's 0-rule value of the same pass."""
    head = "| rules | " + " | ".join(f"{label} {unit_note}" for _, label in systems)
    has_zero = 0 in rows
    if has_zero:
        head += " | " + " | ".join(f"{label} / 0 rules" for _, label in systems)
    out = [head + " |", "|---" * (1 + len(systems) * (2 if has_zero else 1)) + "|"]
    for n in rows:
        cells = [str(n)]
        for s, _ in systems:
            cells.append(spread(get(s, n).values(), digits))
        if has_zero:
            for s, _ in systems:
                cells.append(spread(ratios(get(s, n), get(s, 0)), 2) if get(s, n) and get(s, 0) else "–")
        out.append("| " + " | ".join(cells) + " |")
    return out


def section_a(d, args):
    out = []
    systems = [s for s in d.systems()]
    for proto, title in (("udp", "UDP"), ("tcp", "TCP")):
        for kind, kind_label in d.kinds():
            rows = sorted({k[2] for k in d.a if k[1] == kind and k[3] == proto})
            if not rows:
                continue
            out += [f"#### (a) {title} through a stateless filter, {kind_label}", ""]
            if proto == "udp":
                out.append(f"iperf3 `-u -b 0 -l {args.udp_len} -P {args.udp_streams} -t {args.time}`: Gbit/s "
                           f"forwarded (UDP payload of the datagrams that reached the WAN host's interface: what got "
                           f"through the firewall), median (min–max) over {args.passes} passes; ratios per "
                           "pass to the same system's 0-rule run of that pass.")
            else:
                out.append(f"iperf3 `-P {args.streams} -t {args.time}`: Gbit/s received, median (min–max) over "
                           f"{args.passes} passes; ratios per pass to the same system's 0-rule run of that pass.")
            out.append("")
            out += table_values(rows, systems, lambda s, n: series_a(d, s, kind, n, proto, 0), 2, "Gbit/s")
            out.append("")
            if proto == "udp":
                out += ["Medians of: Mpps forwarded · loss before the WAN host (1 − forwarded / sent datagrams) "
                        "· Gbit/s the iperf3 client sent · Gbit/s iperf3's server read (the rest it lost to its "
                        "socket buffer, not to the firewall):", ""]
                out.append("| rules | " + " | ".join(f"{label}: Mpps · loss · sent · read" for _, label in systems)
                           + " |")
                out.append("|---" * (1 + len(systems)) + "|")
                for n in rows:
                    cells = [str(n)]
                    for s, _ in systems:
                        mp = med(list(series_a(d, s, kind, n, proto, 2).values()))
                        lo = med(list(series_a(d, s, kind, n, proto, 3).values()))
                        se = med(list(series_a(d, s, kind, n, proto, 1).values()))
                        ap = med(list(series_a(d, s, kind, n, proto, 4).values()))
                        cells.append("–" if mp is None else f"{mp:.3f} · {lo:.1f} % · {se:.2f} · {ap:.2f}")
                    out.append("| " + " | ".join(cells) + " |")
                out.append("")
            bad = sorted({x[1] for x in d.filter_not_enforced(kind) if x[2] == proto or kind == "src"})
            if bad and any(s == "sluice" for s, _ in systems):
                out += ["**The sluice column does not measure a filter**: the probe of the last filter rule got "
                        "through sluice at " + ", ".join(f"{n}" for n in bad) + " rules. This build "
                        "parses `filters:` but does not run them; the column is the permit policy alone.", ""]
    return out


def section_b(d, args):
    out = []
    systems = d.systems()
    for kind, kind_label in d.kinds():
        rows = d.counts("b", kind)
        if not rows:
            continue
        out += [f"#### (b) New connections per second through the stateful policy, {kind_label}", ""]
        out.append(f"sluice_connrate, {args.conn_time} s counted per run, {args.conn_threads} client threads × "
                   f"{args.conn_concurrency} connections in flight, 4 source addresses × 16 server ports; conn/s, "
                   f"median (min–max) over {args.passes} passes; ratios per pass to the same system's 0-rule run.")
        out.append("")
        out += table_values(rows, systems, lambda s, n: {p: v[0] for p, v in d.b.get((s, kind, n), {}).items()},
                            0, "conn/s")
        failed = {(s, n): sum(v[2] for v in d.b.get((s, kind, n), {}).values()) for s, _ in systems for n in rows}
        if any(failed.values()):
            out += ["", "Failed connections (reset, timeout, short answer), summed over passes: " +
                    ", ".join(f"{s} at {n} rules: {f}" for (s, n), f in failed.items() if f) + "."]
        lat = []
        for n in rows:
            cells = [str(n)]
            for s, _ in systems:
                v = d.b.get((s, kind, n), {})
                cells.append(f"{med([x[3] for x in v.values()]):.0f} / {med([x[4] for x in v.values()]):.0f}"
                             if v else "–")
            lat.append("| " + " | ".join(cells) + " |")
        out += ["", "Latency of one connection, µs, median over passes of each pass's p50 / p99:", "",
                "| rules | " + " | ".join(label for _, label in systems) + " |",
                "|---" * (1 + len(systems)) + "|"] + lat + [""]
    return out


def section_c(d, args):
    if not d.cost:
        return []
    out = []
    for kind, kind_label in d.kinds():
        rows = sorted(n for k, n in d.cost if k == kind)
        if not rows:
            continue
        base = d.cost.get((kind, 8))
        out += [f"#### (c) sluice first-packet cost, {kind_label}", ""]
        out.append(
            f"BPF_PROG_TEST_RUN, median (min–max) over {args.cost_passes} passes of each pass's interquartile mean; "
            "ratios per pass to the 8-rule config of the same pass. *classification*: the shipped "
            "`classify_policy()` alone (bpf/classify_cost.bpf.c on the datapath's maps: 64 classifications of a "
            "LAN → WAN SYN per program run, repeat 200; the deciding rule is checked to be the permit after the N "
            f"rules), ns per classification. *first packet*: xdp_main_prog at repeat 1, {args.cost_calls} calls, "
            "a TCP SYN of a new flow each (classification, session create, redirect). *denied, miss − hit*: a "
            "default-denied first packet minus the same packet answered by the per-CPU flow cache (classification "
            "plus one flow-cache update, through the whole pipeline). nftables has no equivalent: its cost per "
            "packet is not measurable this way.")
        out.append("")
        out.append("| rules | classification, ns | classification / 8 rules | first packet, ns | first packet / 8 "
                   "rules | denied, miss − hit, ns | miss − hit / 8 rules | compile, ms (median) |")
        out.append("|---|---|---|---|---|---|---|---|")

        def cls(m):
            miss, hit = m.get("deny_miss", {}), m.get("deny_hit", {})
            return {p: miss[p] - hit[p] for p in miss if p in hit}

        for n in rows:
            m = d.cost[(kind, n)]
            fp, only = m.get("first_packet", {}), m.get("classify", {})
            c = cls(m)
            r_only = spread(ratios(only, base.get("classify", {})), 2) if base and only else "–"
            r_fp = spread(ratios(fp, base.get("first_packet", {})), 2) if base else "–"
            r_c = spread(ratios(c, cls(base)), 2) if base else "–"
            comp = med([x[0] for x in d.apply.get((kind, n), [])])
            out.append(f"| {n} | {spread(only.values(), 1) if only else '–'} | {r_only} | {spread(fp.values(), 1)} | "
                       f"{r_fp} | {spread(c.values(), 1)} | {r_c} | {'–' if comp is None else f'{comp:.1f}'} |")
        out.append("")
    return out


def section_configs(d):
    """sluice check and load times per config."""
    if not d.check and not d.load:
        return []
    out = ["#### Configs: size, compile and load", "",
           "`sluice check --json` on each generated sluice config (wall time of the whole command; `compile_ms` "
           "and `classifier_bytes` when this build prints them), the time from `sluice run` to its `running` line, "
           "and the time of `nft -f` for the nftables rule sets (medians over the loads of the run).", ""]
    out.append("| part | kind | N | proto | sluice check | check, s | compile_ms | classifier_bytes | sluice start, s "
               "| nft linear load, s | nft sets load, s |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    keys = sorted(set(d.check) | {(k[1], k[2], k[3], k[4]) for k in d.load},
                  key=lambda k: (k[0], k[1], k[2], k[3]))
    for part, kind, n, proto in keys:
        proto_load = proto
        chk = d.check.get((part, kind, n, proto))
        if chk is None and kind == "src":
            chk = d.check.get((part, kind, n, "any"))

        def load(system):
            v = d.load.get((system, part, kind, n, proto_load))
            return f"{med(v):.2f}" if v else "–"
        sluice_start = d.load.get(("sluice", part, kind, n, proto))
        def opt(x):
            return "–" if x in (None, "-") else x
        out.append(f"| {part} | {kind} | {n} | {proto} | {chk[0] if chk else '–'} | {f'{chk[1]:.2f}' if chk else '–'} | "
                   f"{opt(chk[2] if chk else None)} | {opt(chk[3] if chk else None)} | "
                   f"{f'{med(sluice_start):.2f}' if sluice_start else '–'} | {load('nft-linear')} | {load('nft-set')} |")
    out.append("")
    return out


def section_probes(d):
    if not d.probes:
        return []
    bad = [p for p in d.probes if p[5] != "blocked"]
    out = ["#### Probes", "",
           f"The first time each rule set was in force, a probe matching only its last rule was sent (UDP "
           f"datagrams, or a TCP connect) with a control that must pass: {len(d.probes)} probes, "
           f"{len(d.probes) - len(bad)} blocked as they must be."]
    if bad:
        out.append(" Got through: " + "; ".join(f"({part}) {system} {kind} {n} {proto}"
                                                for part, system, kind, n, proto, _ in bad) + ".")
    out.append("")
    return out


# ------------------------------------------------------------------ SVG


def nice_step(span, target=5):
    raw = span / target if span > 0 else 1
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def panel(s, x0, y0, w, h, title, ylabel, counts, lines, flag=None):
    """One plot: categorical x (rule counts, evenly spaced), y from 0; lines
    = [(system, {n: [values]})], drawn as median with min–max whiskers."""
    left, right, top, bottom = 62, 12, 40 if flag else 28, 40
    pw, ph = w - left - right, h - top - bottom
    allv = [v for _, series in lines for vals in series.values() for v in vals]
    ymax_data = max(allv) if allv else 1
    step = nice_step(ymax_data * 1.08)
    ymax = step * math.ceil(ymax_data * 1.08 / step) if ymax_data > 0 else 1
    ox, oy = x0 + left, y0 + top

    def x(i):
        return ox + (i + 0.5) / len(counts) * pw

    def y(v):
        return oy + ph - v / ymax * ph

    s.append(f'<text x="{x0 + left}" y="{y0 + 16}" font-weight="bold">{esc(title)}</text>')
    if flag:
        s.append(f'<text x="{x0 + left}" y="{y0 + 31}" fill="#b00" font-size="11">{esc(flag)}</text>')
    v = 0.0
    while v <= ymax + 1e-9:
        s.append(f'<line x1="{ox}" y1="{y(v):.1f}" x2="{ox + pw}" y2="{y(v):.1f}" stroke="#e3e3e3"/>')
        label = f"{v:g}" if v < 10000 else f"{v / 1000:g}k"
        s.append(f'<text x="{ox - 6}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11">{label}</text>')
        v += step
    s.append(f'<line x1="{ox}" y1="{oy}" x2="{ox}" y2="{oy + ph}" stroke="#333"/>')
    s.append(f'<line x1="{ox}" y1="{oy + ph}" x2="{ox + pw}" y2="{oy + ph}" stroke="#333"/>')
    for i, n in enumerate(counts):
        s.append(f'<text x="{x(i):.1f}" y="{oy + ph + 15}" text-anchor="middle" font-size="11">{n}</text>')
    s.append(f'<text x="{ox + pw / 2:.1f}" y="{oy + ph + 32}" text-anchor="middle" font-size="11" fill="#555">'
             'rules (evenly spaced, not to scale)</text>')
    s.append(f'<text transform="translate({x0 + 14} {oy + ph / 2:.1f}) rotate(-90)" text-anchor="middle" '
             f'font-size="11">{esc(ylabel)}</text>')
    for system, series in lines:
        colour = COLOURS[system]
        pts = []
        for i, n in enumerate(counts):
            vals = sorted(series.get(n, []))
            if not vals:
                continue
            xx = x(i)
            pts.append((xx, y(statistics.median(vals))))
            if vals[-1] > vals[0]:
                s.append(f'<line x1="{xx:.1f}" y1="{y(vals[0]):.1f}" x2="{xx:.1f}" y2="{y(vals[-1]):.1f}" '
                         f'stroke="{colour}" stroke-width="1.2"/>')
        if len(pts) > 1:
            s.append('<polyline fill="none" stroke="{c}" stroke-width="2.2" points="{p}"/>'.format(
                c=colour, p=" ".join(f"{px:.1f},{py:.1f}" for px, py in pts)))
        for px, py in pts:
            s.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.2" fill="{colour}"/>')


def svg_chart(d, args):
    kinds = d.kinds()
    rows = []   # (title suffix, ylabel, getter(kind) -> (counts, lines), flag(kind))
    systems = [s for s, _ in d.systems()]

    def a_rows(proto, title):
        def get(kind):
            counts = sorted({k[2] for k in d.a if k[1] == kind and k[3] == proto})
            lines = [(s, {n: [v[0] for v in d.a.get((s, kind, n, proto), {}).values()] for n in counts})
                     for s in systems]
            return counts, lines

        def flag(kind):
            bad = [x for x in d.filter_not_enforced(kind) if x[2] == proto or kind == "src"]
            return "sluice: filter not enforced by this build (probe passed): permit policy alone" \
                if bad else None
        return (title, "Gbit/s forwarded" if proto == "udp" else "Gbit/s received", get, flag)

    if any(k[3] == "udp" for k in d.a):
        rows.append(a_rows("udp", f"(a) UDP -l {args.udp_len}, stateless filter"))
    if any(k[3] == "tcp" for k in d.a):
        rows.append(a_rows("tcp", f"(a) TCP -P {args.streams}, stateless filter"))
    if d.b:
        def get_b(kind):
            counts = sorted({k[2] for k in d.b if k[1] == kind})
            return counts, [(s, {n: [v[0] for v in d.b.get((s, kind, n), {}).values()] for n in counts})
                            for s in systems]
        rows.append(("(b) new connections/s, stateful policy", "conn/s", get_b, lambda k: None))
    if d.cost:
        def get_c(kind):
            counts = sorted(n for k, n in d.cost if k == kind)
            return counts, [("sluice", {n: list(d.cost[(kind, n)].get("first_packet", {}).values())
                                        for n in counts})]
        rows.append(("(c) sluice, first packet (BPF_PROG_TEST_RUN)", "ns per packet", get_c, lambda k: None))
    if not rows or not kinds:
        return None
    PW, PH = 500, 260
    W = 20 + PW * len(kinds)
    H = 110 + PH * len(rows)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         '<text x="20" y="26" font-size="16" font-weight="bold">Policy at scale: N rules that match none of the '
         'traffic (IPv4)</text>',
         f'<text x="20" y="46" fill="#555" font-size="11">{esc(args.date)}, {esc(args.rev)}; {esc(args.host)}; '
         f'load average {esc(args.load_start.split()[0])} at the start</text>',
         f'<text x="20" y="62" fill="#555" font-size="11">median and min–max of {args.passes} interleaved passes '
         f'((c): {args.cost_passes}), one run per point per pass; iperf3 -t {args.time}'
         f'{"; QUICK RUN (plumbing only)" if args.quick == "1" else ""}</text>']
    lx = 20
    for system, label in SYSTEMS:
        if system not in systems:
            continue
        s.append(f'<line x1="{lx}" y1="80" x2="{lx + 24}" y2="80" stroke="{COLOURS[system]}" stroke-width="2.5"/>')
        s.append(f'<circle cx="{lx + 12}" cy="80" r="3.2" fill="{COLOURS[system]}"/>')
        s.append(f'<text x="{lx + 30}" y="84">{esc(label)}</text>')
        lx += 30 + 8 * len(label) + 24
    for r, (title, ylabel, get, flag) in enumerate(rows):
        for c, (kind, kind_label) in enumerate(kinds):
            counts, lines = get(kind)
            if not counts:
                continue
            short = {"src": "source rules", "port": "port rules"}.get(kind)
            if short is None:  # mixed (part (c) only) has its table in the report, not a panel
                continue
            panel(s, 10 + c * PW, 96 + r * PH, PW, PH, f"{title} · {short}", ylabel, counts, lines, flag(kind))
    s.append("</svg>")
    return "\n".join(s) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--cost")
    ap.add_argument("--details")
    ap.add_argument("--md", required=True)
    ap.add_argument("--svg")
    for name in ("date", "rev", "host", "load-start", "load-end", "elapsed", "passes", "time", "streams", "udp-len",
                 "udp-streams", "port-width", "conn-time", "conn-threads", "conn-concurrency", "cost-passes",
                 "cost-calls", "nft-version", "ct-max", "quick"):
        ap.add_argument("--" + name, default="?")
    args = ap.parse_args()
    d = Data(args.results, args.cost)

    minutes, seconds = divmod(int(args.elapsed), 60) if args.elapsed.isdigit() else (0, 0)
    md = [f"## sluice policy-at-scale benchmark, {args.date}", ""]
    md.append(f"Git revision {args.rev}. Machine: {args.host}; load average (1, 5, 15 min) {args.load_start} at the "
              f"start, {args.load_end} at the end; the run took {minutes} min {seconds} s. {args.nft_version}; "
              f"nf_conntrack_max {args.ct_max}. Method: docs/scale.md.")
    md.append("")
    if args.quick == "1":
        md += ["**Quick run** (`--quick`): few counts, one pass, 1 s per run. It checks the plumbing; its numbers "
               "are not results.", ""]
    md.append(f"N rules that match none of the traffic, then what lets it through. Rules: source 198.19.x.y/32 "
              f"(source-address rules; the traffic comes from 198.18.1.x) or destination port 20000+i of the "
              f"traffic's protocol (port rules{'' if args.port_width in ('1', '?') else f', {args.port_width} ports each'}"
              "; the traffic goes to 5201 and 5301–5316). One run per point per pass; counts go up on odd passes "
              "and down on even ones, and the systems rotate which goes first at each point.")
    md.append("")
    a, b, c = section_a(d, args), section_b(d, args), section_c(d, args)
    if a:
        md += ["### (a) Throughput through a stateless filter", "",
               "sluice: a `filters:` entry on lan0 with the N rules (`action: drop`), then a permit policy "
               "(at 0 rules the filter is attached with no rules). nftables: the N rules in a forward chain (`policy drop`, WAN-side packets "
               "accepted first, the permit last), every packet marked `notrack` in a raw prerouting chain: no "
               "conntrack, as nf-hipac's table. Port rules are UDP rules for the UDP runs and TCP rules for the "
               "TCP runs.", ""] + a
    if b:
        md += ["### (b) New connections per second through the stateful policy", "",
               "sluice: N `deny` policies before the permit (`tcp-time-wait: 10s`). nftables: `ct state "
               "established,related accept` first, then the N rules (or the set), then the accept; conntrack's "
               "TIME_WAIT set to 10 s in the firewall namespace. Only a connection's first packet meets the "
               "rules in either.", ""] + b
    if c:
        md += ["### (c) First-packet cost (sluice only)", ""] + c
    md += section_configs(d) + section_probes(d)
    if args.svg:
        md += [f"Chart: `{args.svg}`", ""]
    if args.details:
        details = open(args.details).read().strip()
        if details:
            md += ["#### Per-run counters", "",
                   "sluice's datapath counters during each sluice run (checked: XDP saw and forwarded the traffic, "
                   "no policy deny or filter drop hit it), conntrack entries after each nftables run, probes:", "",
                   "```", details, "```", ""]
    open(args.md, "w").write("\n".join(md))
    if args.svg:
        chart = svg_chart(d, args)
        if chart:
            open(args.svg, "w").write(chart)


if __name__ == "__main__":
    main()
