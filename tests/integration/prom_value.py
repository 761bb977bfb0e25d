#!/usr/bin/python3
"""Reads a Prometheus text exposition (a file saved from /metrics) with the
Prometheus project's own parser and prints one sample's value.

    prom_value.py FILE NAME [LABEL=VALUE ...]

NAME is the sample name as exposed (sluice_packets_total). Exactly one sample
must carry every LABEL=VALUE given; its value is printed as an integer when it
is one. Exit 1 (with the reason on stderr) when there is none or several, or
when the file does not parse: so a test that reads a value also proves the
exposition parses.
"""
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    path, name, wanted = sys.argv[1], sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
    try:
        families = list(text_string_to_metric_families(open(path).read()))
    except Exception as e:  # the parser raises ValueError and friends
        sys.exit(f"{path}: not the Prometheus text format: {e}")
    found = [s for f in families for s in f.samples
             if s.name == name and all(s.labels.get(k) == v for k, v in wanted.items())]
    if len(found) != 1:
        sys.exit(f"{path}: {len(found)} samples of {name} with {wanted}")
    v = found[0].value
    print(int(v) if v == int(v) else v)


main()
