#!/usr/bin/env python3
"""Probes of the policy-at-scale benchmark (scripts/bench-scale.sh): does the
firewall drop what the LAST of its N rules matches? A system that passes the
probe does not have all N rules in force, and its numbers would measure
something else.

  scale_probe.py udp-listen --port P [--port2 Q] [--seconds S]
      (WAN host) prints "listening", then counts datagrams to UDP ports P and
      Q by source address and port until a datagram "stop" arrives (or S
      seconds, default 5, have passed), and prints
      {"received": {"SRC:PORT": n, ...}, "stopped": true|false}
  scale_probe.py udp-send --source A --dest D --port P [--count 5] [--stop]
      (LAN host) sends small datagrams from A to D:P, 20 ms apart; with
      --stop, then waits 0.2 s and sends one "stop" datagram
  scale_probe.py tcp-probe --source A --dest D --port P [--timeout 0.7]
      (LAN host) connects from A to D:P and prints "blocked" when the SYN got
      no answer within the timeout, "passed" when it was answered (connected,
      or refused by a host without a listener: either way it went through)
"""
import argparse
import errno
import json
import select
import socket
import sys
import time


def udp_listen(a):
    socks = []
    for port in [a.port] + ([a.port2] if a.port2 and a.port2 != a.port else []):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", port))
        socks.append((s, port))
    print("listening", flush=True)
    counts = {}
    stopped = False
    end = time.monotonic() + a.seconds
    while not stopped and time.monotonic() < end:
        ready, _, _ = select.select([s for s, _ in socks], [], [], 0.05)
        for s in ready:
            port = s.getsockname()[1]
            data, (src, _) = s.recvfrom(2048)
            if data == b"stop":
                stopped = True
                continue
            key = f"{src}:{port}"
            counts[key] = counts.get(key, 0) + 1
    print(json.dumps({"received": counts, "stopped": stopped}), flush=True)


def udp_send(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((a.source, 0))
    for i in range(a.count):
        s.sendto(f"sluice-scale-probe {i}".encode(), (a.dest, a.port))
        time.sleep(0.02)
    if a.stop:
        time.sleep(0.2)
        s.sendto(b"stop", (a.dest, a.port))


def tcp_probe(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((a.source, 0))
    s.settimeout(a.timeout)
    try:
        s.connect((a.dest, a.port))
        print("passed")
    except socket.timeout:
        print("blocked")
    except OSError as e:
        if e.errno == errno.ECONNREFUSED:
            print("passed")
        elif e.errno in (errno.ETIMEDOUT, errno.EHOSTUNREACH):
            print("blocked")
        else:
            print(f"error: {e}")
            sys.exit(1)
    finally:
        s.close()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["udp-listen", "udp-send", "tcp-probe"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--port2", type=int)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--stop", action="store_true")
    p.add_argument("--source")
    p.add_argument("--dest")
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--timeout", type=float, default=0.7)
    a = p.parse_args()
    {"udp-listen": udp_listen, "udp-send": udp_send, "tcp-probe": tcp_probe}[a.what](a)


if __name__ == "__main__":
    main()
