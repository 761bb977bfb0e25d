#!/usr/bin/env python3
"""The egress race client: resolves each name with the system resolver (the
namespace's resolv.conf points at a resolver beyond the firewall, so sluice's
DNS proxy answers), and connects to the answer at once. A first connection
the firewall dropped shows as a connect that needed a SYN retransmission
(over a second) or failed; both are counted.

usage: egress_race.py PORT NAME_FILE THREADS  (one "NAME FAMILY" per line)
prints one JSON object: queries, resolved, connected, slow, failed, examples
"""
import concurrent.futures
import json
import socket
import sys
import time


def one(name: str, family: int, port: int) -> str:
    try:
        infos = socket.getaddrinfo(name, port, family, socket.SOCK_STREAM)
    except socket.gaierror as e:
        return f"unresolved {name}: {e}"
    address = infos[0][4]
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    start = time.monotonic()
    try:
        s.connect(address)
    except OSError as e:
        return f"failed {name} {address[0]}: {e}"
    finally:
        s.close()
    took = time.monotonic() - start
    # The first SYN retransmission comes after 1 s: a connect that took that
    # long lost its first packet.
    return "connected" if took < 0.9 else f"slow {name} {address[0]}: {took:.2f} s"


def main() -> None:
    port, name_file, threads = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    jobs = []
    for line in open(name_file):
        name, fam = line.split()
        jobs.append((name, socket.AF_INET if fam == "4" else socket.AF_INET6))
    counts = {"queries": len(jobs), "resolved": 0, "connected": 0, "slow": 0, "failed": 0, "unresolved": 0}
    examples = []
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        for result in pool.map(lambda j: one(j[0], j[1], port), jobs):
            kind = result.split()[0]
            counts[kind] += 1
            if kind != "unresolved":
                counts["resolved"] += 1
            if kind != "connected" and len(examples) < 10:
                examples.append(result)
    counts["examples"] = examples
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
