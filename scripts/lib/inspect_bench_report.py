#!/usr/bin/python3
"""The report of scripts/bench-inspect.sh: markdown tables and the SVG chart of (b).

Reads the results file the script writes, one measurement per line:
  a MODE FAM PASS GBPS -                      (a) iperf3, MODE = kernel | fast | inspect | handoff
  b MODE v4 PASS GBPS POINT                   (b) iperf3; POINT = pattern count, or - for kernel/fast
  b start|reload N PASS SECONDS               (b) sluice start / `sluice reload` to N patterns
  c MODE FAM PASS RATE COMPLETED FAILED P50 P99   (c) short connections (conn/s, µs)
  s N ROUND COMPILE_S STATE_BYTES C2S_GBPS S2C_GBPS   (b) sluice_scan_rate: the scanner alone
No third-party modules: the SVG is written by hand.
"""
import argparse
import math
import statistics
from collections import defaultdict

MODES = ("kernel", "fast", "inspect")  # (c); (a) adds "handoff"
FAMS = (("v4", "IPv4"), ("v6", "IPv6"))


def spread(values, digits=2):
    v = sorted(values)
    if not v:
        return "–"
    return f"{statistics.median(v):.{digits}f} ({v[0]:.{digits}f}–{v[-1]:.{digits}f})"


def ratios(num, den):
    """Per-pass ratios num[p] / den[p] for the passes both have."""
    return [num[p] / den[p] for p in sorted(den) if p in num and den[p] > 0]


def load(path):
    a = defaultdict(dict)  # (mode, fam) -> {pass: gbps}
    b = defaultdict(dict)  # point -> {pass: gbps}; point = "kernel" | "fast" | int
    b_times = defaultdict(list)  # ("start"|"reload", n) -> [seconds]
    c = defaultdict(dict)  # (mode, fam) -> {pass: (rate, completed, failed, p50, p99)}
    scan = defaultdict(list)  # n -> [(compile_s, state_bytes, c2s_gbps, s2c_gbps)]
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "a":
            a[(f[1], f[2])][int(f[3])] = float(f[4])
        elif f[0] == "b" and f[1] in ("start", "reload"):
            b_times[(f[1], int(f[2]))].append(float(f[4]))
        elif f[0] == "b":
            point = int(f[5]) if f[1] == "inspect" else f[1]
            b[point][int(f[3])] = float(f[4])
        elif f[0] == "c":
            c[(f[1], f[2])][int(f[3])] = (float(f[4]), int(f[5]), int(f[6]), int(f[7]), int(f[8]))
        elif f[0] == "s":
            scan[int(f[1])].append((float(f[3]), int(f[4]), float(f[5]), float(f[6])))
    return a, b, b_times, c, scan


def table_a(a, args):
    out = [
        f"iperf3 TCP LAN host → WAN host, Gbit/s (receiver), median (min–max) over {args.passes_a} interleaved "
        f"passes, `-t {args.time} -P {args.streams}`; inspected = `inspect: bench` with {args.small} patterns; "
        f"handed off = `inspect: bench-handoff`, the same {args.small} patterns client-to-server only, with "
        f"`inspect-bytes: {args.handoff_bytes}` (each data connection is scanned for its first "
        f"{args.handoff_bytes}, then handed back to XDP)",
        "",
        "| family | kernel forwarding | sluice fast path (permit) | inspected | inspected, handed off "
        "| fast / kernel | inspected / fast | handed off / fast | inspected / kernel |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for fam, label in FAMS:
        k, s, i, h = (a.get((m, fam), {}) for m in MODES + ("handoff",))
        if not (k or s or i or h):
            continue
        out.append(
            f"| {label} | {spread(k.values())} | {spread(s.values())} | {spread(i.values())} | "
            f"{spread(h.values())} | {spread(ratios(s, k))} | {spread(ratios(i, s))} | {spread(ratios(h, s))} | "
            f"{spread(ratios(i, k))} |"
        )
    out += ["", "Ratios: per pass, of the same pass and family; median (min–max) of those."]
    if any(m == "handoff" for m, _ in a):
        out[-1] += (
            f" Every handed-off run was checked: the stage scanned at least {args.streams} × {args.handoff_bytes} "
            f"client→server (`inspect-bytes` of each data connection), handed at least {args.streams} connections back to XDP "
            "(`handoffs`), refused none (`handoff_refused`), and XDP renumbered segments after the hand-off "
            "(`tcp-spliced-after-inspection`)."
        )
    return out


def table_b(b, b_times, scan, args):
    counts = sorted(p for p in b if isinstance(p, int))
    fast, kernel = b.get("fast", {}), b.get("kernel", {})
    out = [
        f"iperf3 TCP IPv4 through the inspected path, Gbit/s (receiver), median (min–max) over {args.passes} "
        f"interleaved passes, `-t {args.time} -P {args.streams}`; the ruleset changed by `sluice reload`",
        "",
        "| patterns | inspected | inspected / fast path | inspected / kernel | reload to this size, s |",
        "|---|---|---|---|---|",
    ]
    for n in counts:
        reloads = b_times.get(("reload", n), [])
        out.append(
            f"| {n} | {spread(b[n].values())} | {spread(ratios(b[n], fast))} | {spread(ratios(b[n], kernel))} | "
            f"{spread(reloads, 2) if reloads else '–'} |"
        )
    out.append(f"| *fast path (permit)* | {spread(fast.values())} | 1 | {spread(ratios(fast, kernel))} | |")
    out.append(f"| *kernel forwarding* | {spread(kernel.values())} | | 1 | |")
    out.append("")
    if len(counts) >= 2:
        lo, hi = counts[0], counts[-1]
        out.append(
            f"Flatness: inspected with {hi} patterns / with {lo}, per pass: {spread(ratios(b[hi], b[lo]))}."
        )
    starts = sorted(b_times.items())
    start_text = ", ".join(
        f"{n} patterns {spread(v, 1)} s" for (kind, n), v in starts if kind == "start"
    )
    if start_text:
        out.append(f"`sluice run` until it reported running (BPF load, attach, stage start): {start_text}.")
    out.append(
        "Ratios: per pass, against the fast path / kernel forwarding of the same pass; median (min–max). "
        "Every point was checked by its canary (the ruleset's own alert pattern, sent once: its counter "
        "must rise by one), so each number is the ruleset of that size."
    )
    if scan:
        out += [
            "",
            "The stage's scanner alone (`sluice_scan_rate`: the same rulesets compiled by the stage's own code, "
            "random bytes in 256 KiB chunks through one stream, one core, no sockets), median (min–max) of "
            f"{max(len(v) for v in scan.values())} rounds; *scan share* = the inspected throughput above / the "
            "client-to-server scan rate: the part of one core that scanning needs at that throughput.",
            "",
            "| patterns | compile, s (both directions) | stream state, B | scan client→server, Gbit/s per core "
            "| scan server→client | scan share |",
            "|---|---|---|---|---|---|",
        ]
        for n in sorted(scan):
            rounds = scan[n]
            c2s = [r[2] for r in rounds]
            share = (
                f"{statistics.median(b[n].values()) / statistics.median(c2s):.0%}"
                if n in b and statistics.median(c2s) > 0
                else "–"
            )
            out.append(
                f"| {n} | {spread([r[0] for r in rounds])} | {rounds[0][1]} | {spread(c2s, 1)} | "
                f"{spread([r[3] for r in rounds], 1)} | {share} |"
            )
    return out


def table_c(c, args):
    out = [
        "Short connections per second (connect, 80 B request, 200 B response, close; the client closes "
        f"first), median (min–max) over {args.passes} interleaved passes, {args.conn_time} s each after 0.5 s "
        f"warm-up, {args.conn_threads} client threads × {args.conn_concurrency} connections in flight; "
        "three paths only: a short connection never reaches `inspect-bytes`, so the hand-off path of (a) would "
        "measure the inspected path again",
        "",
        "| family | kernel forwarding | sluice fast path (permit) | inspected | fast / kernel | inspected / fast "
        "| inspected / kernel |",
        "|---|---|---|---|---|---|---|",
    ]
    rate = lambda m, fam: {p: v[0] for p, v in c.get((m, fam), {}).items()}  # noqa: E731
    for fam, label in FAMS:
        k, s, i = (rate(m, fam) for m in MODES)
        if not (k or s or i):
            continue
        out.append(
            f"| {label} | {spread(k.values(), 0)} | {spread(s.values(), 0)} | {spread(i.values(), 0)} | "
            f"{spread(ratios(s, k))} | {spread(ratios(i, s))} | {spread(ratios(i, k))} |"
        )
    out += [
        "",
        "Latency of one connection (connect to close, as the client saw it), µs: median over passes of each "
        "pass's p50 / p99, and failed connections (reset, timeout, short answer) summed over passes:",
        "",
        "| family | kernel p50 / p99 | fast path p50 / p99 | inspected p50 / p99 | failed (kernel, fast, inspected) |",
        "|---|---|---|---|---|",
    ]
    for fam, label in FAMS:
        cells, fails = [], []
        for m in MODES:
            runs = c.get((m, fam), {}).values()
            if runs:
                cells.append(
                    f"{statistics.median(r[3] for r in runs):.0f} / {statistics.median(r[4] for r in runs):.0f}"
                )
                fails.append(str(sum(r[2] for r in runs)))
            else:
                cells.append("–")
                fails.append("–")
        if any(x != "–" for x in cells):
            out.append(f"| {label} | {' | '.join(cells)} | {', '.join(fails)} |")
    return out


# ------------------------------------------------------------------ SVG


def nice_step(span, target=6):
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_chart(b, args):
    counts = sorted(p for p in b if isinstance(p, int))
    if not counts:
        return None
    fast, kernel = b.get("fast", {}), b.get("kernel", {})
    W, H = 900, 520
    left, right, top, bottom = 70, 230, 100, 60
    pw, ph = W - left - right, H - top - bottom
    everything = [v for n in counts for v in b[n].values()] + list(fast.values()) + list(kernel.values())
    ymax_data = max(everything) if everything else 1
    step = nice_step(ymax_data * 1.1)
    ymax = step * math.ceil(ymax_data * 1.1 / step)
    lx0, lx1 = math.log10(counts[0]), math.log10(counts[-1])
    if lx1 == lx0:
        lx0, lx1 = lx0 - 1, lx1 + 1
    pad = 0.06 * (lx1 - lx0)

    def x(n):
        return left + (math.log10(n) - lx0 + pad) / (lx1 - lx0 + 2 * pad) * pw

    def y(v):
        return top + ph - v / ymax * ph

    s = []
    s.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
        'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">'
    )
    s.append(f'<rect width="{W}" height="{H}" fill="white"/>')
    s.append(
        f'<text x="{left}" y="26" font-size="16" font-weight="bold">'
        "Inspected-path throughput vs ruleset size (IPv4, iperf3)</text>"
    )
    s.append(
        f'<text x="{left}" y="46" fill="#555" font-size="12">{esc(args.date)}; {esc(args.host)}; '
        f"load average {esc(args.load_start.split()[0])} at the start</text>"
    )
    s.append(
        f'<text x="{left}" y="62" fill="#555" font-size="12">median and min–max of {args.passes} interleaved '
        f"passes, iperf3 -t {args.time} -P {args.streams}; the ruleset changed by sluice reload</text>"
    )
    # grid and y axis
    v = 0.0
    while v <= ymax + 1e-9:
        yy = y(v)
        s.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + pw}" y2="{yy:.1f}" stroke="#e3e3e3"/>')
        s.append(f'<text x="{left - 8}" y="{yy + 4:.1f}" text-anchor="end">{v:g}</text>')
        v += step
    s.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>')
    s.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>')
    for n in counts:
        xx = x(n)
        s.append(f'<line x1="{xx:.1f}" y1="{top + ph}" x2="{xx:.1f}" y2="{top + ph + 5}" stroke="#333"/>')
        s.append(f'<text x="{xx:.1f}" y="{top + ph + 20}" text-anchor="middle">{n}</text>')
    s.append(
        f'<text x="{left + pw / 2:.1f}" y="{H - 22}" text-anchor="middle">'
        "patterns in the ruleset (log scale)</text>"
    )
    s.append(
        f'<text transform="translate(22 {top + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
        "Gbit/s (receiver)</text>"
    )

    # reference levels: min–max band and median line, labelled at the right
    refs = [
        (kernel, "kernel forwarding", "#7a7a7a", "2 4"),
        (fast, "sluice fast path (permit)", "#1f77b4", "8 5"),
    ]
    labels = []
    for series, name, colour, dash in refs:
        if not series:
            continue
        vals = sorted(series.values())
        med = statistics.median(vals)
        s.append(
            f'<rect x="{left}" y="{y(vals[-1]):.1f}" width="{pw}" height="{max(y(vals[0]) - y(vals[-1]), 0.5):.1f}" '
            f'fill="{colour}" fill-opacity="0.10"/>'
        )
        s.append(
            f'<line x1="{left}" y1="{y(med):.1f}" x2="{left + pw}" y2="{y(med):.1f}" stroke="{colour}" '
            f'stroke-width="2" stroke-dasharray="{dash}"/>'
        )
        labels.append((y(med), f"{name}: {med:.2f}", colour))

    # the inspected line with min–max whiskers
    colour = "#d62728"
    pts = []
    for n in counts:
        vals = sorted(b[n].values())
        med = statistics.median(vals)
        xx = x(n)
        pts.append((xx, y(med)))
        s.append(
            f'<line x1="{xx:.1f}" y1="{y(vals[0]):.1f}" x2="{xx:.1f}" y2="{y(vals[-1]):.1f}" stroke="{colour}" '
            'stroke-width="1.5"/>'
        )
        for vv in (vals[0], vals[-1]):
            s.append(
                f'<line x1="{xx - 5:.1f}" y1="{y(vv):.1f}" x2="{xx + 5:.1f}" y2="{y(vv):.1f}" stroke="{colour}" '
                'stroke-width="1.5"/>'
            )
    s.append(
        '<polyline fill="none" stroke="{c}" stroke-width="2.5" points="{p}"/>'.format(
            c=colour, p=" ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
        )
    )
    for (px, py), n in zip(pts, counts):
        med = statistics.median(b[n].values())
        s.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{colour}"/>')
        s.append(f'<text x="{px + 8:.1f}" y="{py - 8:.1f}" fill="{colour}">{med:.2f}</text>')
    last = statistics.median(b[counts[-1]].values())
    labels.append((y(last), f"inspected, {counts[-1]} patterns: {last:.2f}", colour))

    # right-hand labels, pushed apart so that they never overlap
    labels.sort()
    placed = []
    for yy, text, col in labels:
        if placed and yy - placed[-1][0] < 16:
            yy = placed[-1][0] + 16
        placed.append((yy, text, col))
    for yy, text, col in placed:
        s.append(f'<text x="{left + pw + 8}" y="{yy + 4:.1f}" fill="{col}">{esc(text)}</text>')

    # legend: one row between the subtitle and the plot
    lx, ly = left, top - 16
    items = [
        (f'<line x1="{{x}}" y1="{ly - 4}" x2="{{x2}}" y2="{ly - 4}" stroke="{colour}" stroke-width="2.5"/>'
         f'<circle cx="{{xm}}" cy="{ly - 4}" r="4" fill="{colour}"/>', "inspected path (median, min–max whiskers)"),
        (f'<line x1="{{x}}" y1="{ly - 4}" x2="{{x2}}" y2="{ly - 4}" stroke="#1f77b4" stroke-width="2" '
         'stroke-dasharray="8 5"/>', "fast path"),
        (f'<line x1="{{x}}" y1="{ly - 4}" x2="{{x2}}" y2="{ly - 4}" stroke="#7a7a7a" stroke-width="2" '
         'stroke-dasharray="2 4"/>', "kernel forwarding"),
        (f'<rect x="{{x}}" y="{ly - 9}" width="26" height="10" fill="#7a7a7a" fill-opacity="0.2"/>',
         "reference min–max"),
    ]
    for mark, text in items:
        s.append(mark.format(x=lx, x2=lx + 26, xm=lx + 13))
        s.append(f'<text x="{lx + 32}" y="{ly}">{esc(text)}</text>')
        lx += 32 + 7.2 * len(text) + 22
    s.append("</svg>")
    return "\n".join(s) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--details")
    ap.add_argument("--md", required=True)
    ap.add_argument("--svg")
    for name in ("date", "host", "load-start", "load-end", "elapsed", "passes", "passes-a", "handoff-bytes", "time",
                 "streams", "small", "conn-time", "conn-threads", "conn-concurrency"):
        ap.add_argument("--" + name, default="?")
    args = ap.parse_args()
    if args.passes_a == "?":
        args.passes_a = args.passes
    a, b, b_times, c, scan = load(args.results)

    md = [f"## sluice inspection benchmark, {args.date}", ""]
    minutes, seconds = divmod(int(args.elapsed), 60) if args.elapsed.isdigit() else (0, 0)
    md.append(
        f"Machine: {args.host}; load average (1, 5, 15 min) {args.load_start} at the start, {args.load_end} "
        f"at the end; the run took {minutes} min {seconds} s."
    )
    md.append("")
    if a:
        md += [
            "### (a) Throughput: kernel forwarding, fast path, inspected path, inspected and handed off",
            "",
        ] + table_a(a, args) + [""]
    if b:
        md += ["### (b) Inspected throughput as the ruleset grows (IPv4)", ""] + table_b(b, b_times, scan, args) + [""]
        if args.svg:
            md += [f"Chart: `{args.svg}`", ""]
    if c:
        md += ["### (c) Short connections", ""] + table_c(c, args) + [""]
    if args.details:
        details = open(args.details).read().strip()
        if details:
            md += [
                "### Per-run counters",
                "",
                "sluice's datapath counters during each run (passed = handed to the kernel, which is how punted "
                "packets reach the stage) and the stage's own counters (connections accepted, bytes scanned; on the "
                "hand-off path also the share of what the server received that the stage scanned, the connections "
                "handed back to XDP and refused, and the segments XDP renumbered after a hand-off):",
                "",
                "```",
                details,
                "```",
                "",
            ]
    open(args.md, "w").write("\n".join(md))
    if args.svg and b:
        chart = svg_chart(b, args)
        if chart:
            open(args.svg, "w").write(chart)


if __name__ == "__main__":
    main()
