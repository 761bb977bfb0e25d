#!/usr/bin/python3
"""Flows that must survive an HA failover (tests/integration/test_ha_failover.sh).

  server --bind H --port P --ready FILE
      TCP: echoes every byte of every connection back; writes "tcp ADDR PORT"
      to stdout when one is accepted (what a server behind source NAT sees).
      UDP: answers every datagram with itself.

  client --host H --port P --seconds S --out FILE [--bind ADDR]
      One TCP connection carrying paced data both ways (64 KiB every 20 ms,
      echoed back), and one UDP flow (a numbered datagram every 10 ms) from
      one source port, for S seconds. Writes a JSON summary to --out: bytes and
      SHA-256 of what was sent and of what came back, the longest stall of
      the echo, UDP datagrams sent / answered and the longest UDP gap. Exits
      0 when the echo is byte-exact and complete.
"""
import argparse
import hashlib
import json
import os
import socket
import sys
import threading
import time

CHUNK = 64 * 1024
PACE = 0.02


def family_of(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def serve(args):
    fam = family_of(args.bind)
    tcp = socket.socket(fam, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((args.bind, args.port))
    tcp.listen(16)
    udp = socket.socket(fam, socket.SOCK_DGRAM)
    udp.bind((args.bind, args.port))

    def echo(conn):
        with conn:
            while True:
                data = conn.recv(1 << 16)
                if not data:
                    return
                conn.sendall(data)

    def udp_loop():
        while True:
            data, peer = udp.recvfrom(2048)
            udp.sendto(data, peer)

    threading.Thread(target=udp_loop, daemon=True).start()
    with open(args.ready, "w") as f:
        f.write("ready\n")
    while True:
        conn, peer = tcp.accept()
        print("tcp", peer[0], peer[1], flush=True)
        threading.Thread(target=echo, args=(conn,), daemon=True).start()


def client(args):
    fam = family_of(args.host)
    result = {"error": None}
    tcp = socket.socket(fam, socket.SOCK_STREAM)
    if args.bind:
        tcp.bind((args.bind, 0))
    tcp.settimeout(10)
    tcp.connect((args.host, args.port))
    tcp.settimeout(None)
    result["local_port"] = tcp.getsockname()[1]
    sent_hash, recv_hash = hashlib.sha256(), hashlib.sha256()
    state = {"sent": 0, "recv": 0, "last_recv": time.monotonic(), "stall": 0.0, "done": False}
    lock = threading.Lock()

    def reader():
        while True:
            try:
                data = tcp.recv(1 << 16)
            except OSError as e:
                result["error"] = "tcp receive: %s" % e
                return
            if not data:
                return
            now = time.monotonic()
            with lock:
                state["stall"] = max(state["stall"], now - state["last_recv"])
                state["last_recv"] = now
                state["recv"] += len(data)
            recv_hash.update(data)

    udp = socket.socket(fam, socket.SOCK_DGRAM)
    if args.bind:
        udp.bind((args.bind, 0))
    udp.connect((args.host, args.port))
    udp.settimeout(0.005)
    udp_state = {"sent": 0, "answered": 0, "last": time.monotonic(), "gap": 0.0}

    def udp_loop():
        deadline = time.monotonic() + args.seconds
        seq = 0
        while time.monotonic() < deadline:
            seq += 1
            try:
                udp.send(seq.to_bytes(8, "big"))
                udp_state["sent"] += 1
            except OSError:
                pass
            end = time.monotonic() + 0.01
            while time.monotonic() < end:
                try:
                    udp.recv(64)
                except (socket.timeout, OSError):
                    continue
                now = time.monotonic()
                udp_state["gap"] = max(udp_state["gap"], now - udp_state["last"])
                udp_state["last"] = now
                udp_state["answered"] += 1

    rt = threading.Thread(target=reader)
    rt.start()
    ut = threading.Thread(target=udp_loop)
    ut.start()
    seed = hashlib.sha256(str(result["local_port"]).encode()).digest()
    deadline = time.monotonic() + args.seconds
    block = 0
    try:
        while time.monotonic() < deadline:
            data = hashlib.sha256(seed + block.to_bytes(8, "big")).digest() * (CHUNK // 32)
            block += 1
            tcp.sendall(data)
            sent_hash.update(data)
            state["sent"] += len(data)
            time.sleep(PACE)
        tcp.shutdown(socket.SHUT_WR)
    except OSError as e:
        result["error"] = "tcp send: %s" % e
    rt.join(timeout=30)
    ut.join()
    tcp.close()
    result.update({
        "tcp_sent": state["sent"], "tcp_sent_sha256": sent_hash.hexdigest(),
        "tcp_received": state["recv"], "tcp_received_sha256": recv_hash.hexdigest(),
        "tcp_max_stall_ms": round(state["stall"] * 1000, 1),
        "udp_sent": udp_state["sent"], "udp_answered": udp_state["answered"],
        "udp_max_gap_ms": round(udp_state["gap"] * 1000, 1),
    })
    ok = (result["error"] is None and result["tcp_sent"] > 0 and result["tcp_sent"] == result["tcp_received"]
          and result["tcp_sent_sha256"] == result["tcp_received_sha256"])
    result["ok"] = ok
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--bind", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--ready", required=True)
    c = sub.add_parser("client")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--seconds", type=float, required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--bind")
    args = ap.parse_args()
    if args.cmd == "server":
        serve(args)
        return 0
    return client(args)


if __name__ == "__main__":
    sys.exit(main())
