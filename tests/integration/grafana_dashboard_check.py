#!/usr/bin/python3
"""Checks docs/grafana-dashboard.json against what sluice really exposes.

    grafana_dashboard_check.py structure DASHBOARD
        importable shape: schemaVersion, the ${DS_PROMETHEUS} input every
        panel, target and variable uses, unique panel ids and refIds, a grid
        of 24 columns without overlaps, an expression in every target
    grafana_dashboard_check.py names DASHBOARD
        the metric families the expressions use, one a line
    grafana_dashboard_check.py docs DASHBOARD OPERATIONS_MD
        every family used is in the "Metrics" table of docs/operations.md
    grafana_dashboard_check.py rules DASHBOARD OUT.yml
        every expression (Grafana's variables given values) as a recording
        rule, for `promtool check rules` (PromQL syntax)
    grafana_dashboard_check.py scrape DASHBOARD SCRAPE OPERATIONS_MD [--absent-ok PREFIX]...
        every family used is in the scrape (a /metrics body: "# TYPE name"),
        and every label an expression matches or groups by is a label of its
        families (from their samples in the scrape; from the docs' table when
        the scrape has none); families starting with PREFIX may be absent
        (HA families exist only with an ha: pair) and are then checked
        against the docs only
    grafana_dashboard_check.py evaluate DASHBOARD PROMETHEUS_URL [--require TITLE]...
        every expression evaluated by a real Prometheus (instant query, now):
        no error; the panels named by --require return data

Exit 1 with one line per problem on stderr. Grafana's variables: $job and
$instance match everything, $__rate_interval is 1m, $__range 1h.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

SUBST = {"$__rate_interval": "1m", "$__range": "1h", "$__interval": "1m", "$job": ".*", "$instance": ".*"}
TARGET_LABELS = {"job", "instance"}   # added by Prometheus when it scrapes
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
NAME = re.compile(r"\bsluice_[a-zA-Z0-9_]+\b")
SELECTOR = re.compile(r"\b(sluice_[a-zA-Z0-9_]+)\s*\{([^}]*)\}")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"')
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
LABEL_VALUES = re.compile(r"^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$")


def fail(problems):
    for p in problems:
        print(p, file=sys.stderr)
    sys.exit(1 if problems else 0)


def all_panels(dashboard):
    for p in dashboard.get("panels", []):
        yield p
        yield from p.get("panels", [])   # a collapsed row carries its panels


def substitute(expr):
    for k in sorted(SUBST, key=len, reverse=True):
        expr = expr.replace("${" + k[1:] + "}", SUBST[k]).replace(k, SUBST[k])
    return expr


def expressions(dashboard):
    """(where, PromQL) for every query: panel targets, variables, annotations."""
    out = []
    for p in all_panels(dashboard):
        for t in p.get("targets", []):
            out.append((f'panel "{p.get("title")}" {t.get("refId")}', t.get("expr", "")))
    for v in dashboard.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = LABEL_VALUES.match(q)
        out.append((f'variable ${v.get("name")}', m.group(1) if m else q))
    for a in dashboard.get("annotations", {}).get("list", []):
        if a.get("expr"):
            out.append((f'annotation "{a.get("name")}"', a["expr"]))
    return [(w, substitute(e)) for w, e in out]


def names_in(expr):
    return set(NAME.findall(STRING.sub('""', expr)))


def labels_used(expr):
    """{family: labels matched on it} and the labels grouped by."""
    matched = {}
    for name, body in SELECTOR.findall(expr):
        matched.setdefault(name, set()).update(MATCHER.findall(body))
    grouped = set()
    for body in GROUPING.findall(STRING.sub('""', expr)):
        grouped.update(x.strip() for x in body.split(",") if x.strip())
    return matched, grouped


def documented(operations_md):
    """{family: labels} from the Metrics table of docs/operations.md."""
    text = open(operations_md).read()
    section = text.split("\n## Metrics", 1)[1].split("\n## ", 1)[0]
    families, previous = {}, set()
    for line in section.splitlines():
        if not line.startswith("| `sluice_"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        labels = set(re.findall(r"`([a-z_]+)`", cells[2])) if len(cells) > 2 else set()
        if len(cells) > 2 and cells[2] == "same":
            labels = previous
        previous = labels
        for name in re.findall(r"`(sluice_[a-z0-9_]+)`", cells[0]):
            families[name] = labels
    return families


def scraped(path):
    """{family: labels of its samples} from a Prometheus text exposition."""
    from prometheus_client.parser import text_string_to_metric_families
    text = open(path).read()
    families = {m.group(1): set() for m in re.finditer(r"^# TYPE (\S+) ", text, re.M)}
    for f in text_string_to_metric_families(text):
        for s in f.samples:
            # The parser strips a counter's _total from the family name, not from the sample's.
            for name in (s.name, f.name):
                if name in families:
                    families[name].update(s.labels)
    return families


def check_structure(d):
    problems = []
    if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
        problems.append(f"schemaVersion {d.get('schemaVersion')!r}: expected 36 or later")
    for key in ("title", "uid"):
        if not d.get(key):
            problems.append(f"no {key}")
    inputs = [i for i in d.get("__inputs", []) if i.get("name") == "DS_PROMETHEUS"]
    if not inputs or inputs[0].get("pluginId") != "prometheus" or inputs[0].get("type") != "datasource":
        problems.append("no __inputs entry DS_PROMETHEUS (type datasource, pluginId prometheus)")
    ds_ok = lambda ds: isinstance(ds, dict) and ds.get("uid") == "${DS_PROMETHEUS}" and ds.get("type") == "prometheus"
    ids, cells = set(), []
    for p in all_panels(d):
        title = p.get("title", "?")
        if p.get("id") in ids:
            problems.append(f'panel "{title}": id {p.get("id")} used twice')
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in ("x", "y", "w", "h")) or g["x"] < 0 or g["x"] + g["w"] > 24:
            problems.append(f'panel "{title}": gridPos {g} outside the 24 columns')
        else:
            for other, og in cells:
                if (g["x"] < og["x"] + og["w"] and og["x"] < g["x"] + g["w"] and
                        g["y"] < og["y"] + og["h"] and og["y"] < g["y"] + g["h"]):
                    problems.append(f'panel "{title}" overlaps "{other}"')
            cells.append((title, g))
        if p.get("type") == "row":
            continue
        if not ds_ok(p.get("datasource")):
            problems.append(f'panel "{title}": datasource is not ${{DS_PROMETHEUS}}')
        targets = p.get("targets", [])
        if not targets:
            problems.append(f'panel "{title}": no targets')
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs):
            problems.append(f'panel "{title}": refIds {refs} not unique')
        for t in targets:
            if not t.get("expr", "").strip():
                problems.append(f'panel "{title}" {t.get("refId")}: no expr')
            if not ds_ok(t.get("datasource")):
                problems.append(f'panel "{title}" {t.get("refId")}: datasource is not ${{DS_PROMETHEUS}}')
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query" and not ds_ok(v.get("datasource")):
            problems.append(f'variable {v.get("name")}: datasource is not ${{DS_PROMETHEUS}}')
    return problems


def main():
    mode, path = sys.argv[1], sys.argv[2]
    d = json.load(open(path))
    exprs = expressions(d)
    used = sorted(set().union(*(names_in(e) for _, e in exprs)))
    if mode == "structure":
        fail(check_structure(d))
    elif mode == "names":
        print("\n".join(used))
    elif mode == "docs":
        docs = documented(sys.argv[3])
        fail([f"{n}: used by the dashboard, not in the Metrics table of {sys.argv[3]}" for n in used if n not in docs])
    elif mode == "rules":
        rules = [{"record": f"dashboard:expr_{i}", "expr": e} for i, (_, e) in enumerate(exprs)]
        with open(sys.argv[3], "w") as f:
            json.dump({"groups": [{"name": "grafana-dashboard", "rules": rules}]}, f, indent=1)   # JSON is YAML
    elif mode == "scrape":
        scrape, docs = scraped(sys.argv[3]), documented(sys.argv[4])
        absent_ok = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--absent-ok"]
        problems = []
        for n in used:
            if n not in scrape and not (any(n.startswith(p) for p in absent_ok) and n in docs):
                problems.append(f"{n}: used by the dashboard, not in the scrape")
        labels_of = lambda n: scrape[n] if scrape.get(n) else docs.get(n, set())
        for where, e in exprs:
            matched, grouped = labels_used(e)
            for n, labels in matched.items():
                for l in labels - TARGET_LABELS - labels_of(n):
                    problems.append(f"{where}: {n} has no label {l} (it has {sorted(labels_of(n))})")
            union = set().union(*(labels_of(n) for n in names_in(e))) if names_in(e) else set()
            for l in grouped - TARGET_LABELS - union:
                problems.append(f"{where}: groups by {l}, which none of {sorted(names_in(e))} has")
        fail(problems)
    elif mode == "evaluate":
        url = sys.argv[3].rstrip("/")
        required = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--require"]
        problems, with_data = [], set()
        for where, e in exprs:
            q = urllib.parse.urlencode({"query": e})
            try:
                r = json.load(urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10))
            except urllib.error.HTTPError as err:   # Prometheus answers a bad query with 400 and a JSON body
                r = json.load(err)
            if r.get("status") != "success":
                problems.append(f"{where}: {r.get('errorType')}: {r.get('error')} -- {e}")
            elif r["data"]["result"]:
                with_data.add(where.split('" ')[0] + '"' if where.startswith("panel") else where)
        for title in required:
            if f'panel "{title}"' not in with_data:
                problems.append(f'panel "{title}": no data')
        print(f"{len(exprs)} expressions evaluated; with data: {len(with_data)}")
        fail(problems)
    else:
        sys.exit(f"unknown mode {mode}")


main()
