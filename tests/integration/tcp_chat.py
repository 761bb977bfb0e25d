#!/usr/bin/python3
"""TCP helpers for sluice's integration tests (run with Debian's /usr/bin/python3).

  probe  --host H --port P [--timeout S]
      One TCP connect. Prints one word and exits with its code:
      connected (0), refused (2: RST / ECONNREFUSED), timeout (3), error (1).

  sink   --bind H --port P --ready FILE --result FILE
      Accepts one connection, reads to EOF, writes "BYTES SHA256" to --result.

  source --host H --port P --bytes N [--seed S]
      Sends N pseudo-random bytes, prints "BYTES SHA256" of what it sent.

  accept-server --bind H --port P --ready FILE
      Accepts connections forever and closes each at once (a port that is open).

  udp-probe --host H --port P [--timeout S]
      Sends one datagram on a connected UDP socket and waits for an answer or
      an ICMP error. Prints answered (0), timeout (3) or "icmp ERRNO" (4),
      e.g. "icmp EHOSTUNREACH" for ICMP admin-prohibited (IPv4 type 3 code 13)
      and "icmp EACCES" for ICMPv6 admin-prohibited (type 1 code 1).

  echo-server --bind H --port P --ready FILE
      Accepts one connection and echoes every byte back until EOF.

  peer-server --bind H --port P --ready FILE [--udp]
      Answers every TCP connection (or UDP datagram with --udp) with the
      address and port it came from, "ADDR PORT\n": what a server behind NAT sees.

  ask --host H --port P [--udp] [--timeout S]
      Connects (or sends one datagram) to a peer-server and prints its answer.

  chat-client --host H --port P --control FIFO --log FILE
      One long-lived connection to an echo server. Reads commands from FIFO,
      one per line: "exchange COUNT SIZE" sends COUNT messages of SIZE bytes,
      each waiting for and verifying its echo, then appends
      "done SEQ TOTAL_MESSAGES TOTAL_BYTES" to --log ("fail SEQ REASON" on an
      error). "quit" closes the connection. Its local port is written to the
      log first as "port N".
"""
import argparse
import errno
import hashlib
import os
import random
import socket
import sys


def family_of(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def listen(host, port):
    s = socket.socket(family_of(host), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(128)  # a burst of connects (the egress race test) must not overflow it
    return s


def cmd_probe(a):
    s = socket.socket(family_of(a.host), socket.SOCK_STREAM)
    s.settimeout(a.timeout)
    try:
        s.connect((a.host, a.port))
        print("connected")
        return 0
    except ConnectionRefusedError:
        print("refused")
        return 2
    except (socket.timeout, TimeoutError):
        print("timeout")
        return 3
    except OSError as e:
        print("error %s" % errno.errorcode.get(e.errno, e.errno))
        return 1
    finally:
        s.close()


def client_call(host, port, kind, timeout, exchange, icmp_word="error"):
    """Connects, runs exchange(sock) -> (word, code), prints the word. Timeouts
    print "timeout" (3); other socket errors "<icmp_word> ERRNO"."""
    s = socket.socket(family_of(host), kind)
    s.settimeout(timeout)
    try:
        s.connect((host, port))
        word, code = exchange(s)
        print(word)
        return code
    except (socket.timeout, TimeoutError):
        print("timeout")
        return 3
    except OSError as e:
        print("%s %s" % (icmp_word, errno.errorcode.get(e.errno, e.errno)))
        return 4 if icmp_word == "icmp" else 1
    finally:
        s.close()


def cmd_udp_probe(a):
    def exchange(s):
        s.send(b"sluice udp probe")
        s.recv(2048)
        return "answered", 0
    return client_call(a.host, a.port, socket.SOCK_DGRAM, a.timeout, exchange, "icmp")


def cmd_accept_server(a):
    ls = listen(a.bind, a.port)
    write_atomic(a.ready, "ready\n")
    while True:
        conn, _ = ls.accept()
        conn.close()


def cmd_peer_server(a):
    if a.udp:
        s = socket.socket(family_of(a.bind), socket.SOCK_DGRAM)
        s.bind((a.bind, a.port))
        write_atomic(a.ready, "ready\n")
        while True:
            _, peer = s.recvfrom(2048)
            s.sendto(("%s %d\n" % (peer[0], peer[1])).encode(), peer)
    ls = listen(a.bind, a.port)
    write_atomic(a.ready, "ready\n")
    while True:
        conn, peer = ls.accept()
        conn.sendall(("%s %d\n" % (peer[0], peer[1])).encode())
        conn.close()


def cmd_ask(a):
    def exchange(s):
        if a.udp:
            s.send(b"who am i")
        return s.recv(256).decode().strip(), 0
    return client_call(a.host, a.port, socket.SOCK_DGRAM if a.udp else socket.SOCK_STREAM, a.timeout, exchange)


def cmd_sink(a):
    ls = listen(a.bind, a.port)
    write_atomic(a.ready, "ready\n")
    conn, _ = ls.accept()
    h = hashlib.sha256()
    n = 0
    while True:
        buf = conn.recv(1 << 16)
        if not buf:
            break
        h.update(buf)
        n += len(buf)
    conn.close()
    write_atomic(a.result, "%d %s\n" % (n, h.hexdigest()))
    return 0


def cmd_source(a):
    rng = random.Random(a.seed)
    s = socket.create_connection((a.host, a.port), timeout=30)
    h = hashlib.sha256()
    left = a.bytes
    while left > 0:
        chunk = rng.randbytes(min(left, 1 << 16))
        s.sendall(chunk)
        h.update(chunk)
        left -= len(chunk)
    s.shutdown(socket.SHUT_WR)
    # Wait for the receiver to close: every byte was read.
    s.settimeout(30)
    while s.recv(4096):
        pass
    s.close()
    print("%d %s" % (a.bytes, h.hexdigest()))
    return 0


def cmd_echo_server(a):
    ls = listen(a.bind, a.port)
    write_atomic(a.ready, "ready\n")
    conn, _ = ls.accept()
    while True:
        buf = conn.recv(1 << 16)
        if not buf:
            break
        conn.sendall(buf)
    conn.close()
    return 0


def recv_exact(s, n):
    out = bytearray()
    while len(out) < n:
        buf = s.recv(n - len(out))
        if not buf:
            raise ConnectionError("peer closed the connection")
        out += buf
    return bytes(out)


def cmd_chat_client(a):
    log = open(a.log, "a", buffering=1)
    s = socket.create_connection((a.host, a.port), timeout=30)
    s.settimeout(a.timeout)
    log.write("port %d\n" % s.getsockname()[1])
    total_msgs = total_bytes = seq = 0
    rng = random.Random(1)
    with open(a.control, "r") as ctl:
        for line in ctl:
            words = line.split()
            if not words:
                continue
            if words[0] == "quit":
                break
            if words[0] != "exchange" or len(words) != 3:
                log.write("fail %d bad command %r\n" % (seq, line))
                continue
            seq += 1
            count, size = int(words[1]), int(words[2])
            try:
                for _ in range(count):
                    msg = rng.randbytes(size)
                    s.sendall(msg)
                    if recv_exact(s, size) != msg:
                        raise ValueError("echo differs from what was sent")
                    total_msgs += 1
                    total_bytes += size
                log.write("done %d %d %d\n" % (seq, total_msgs, total_bytes))
            except (OSError, ValueError) as e:
                log.write("fail %d %s: %s\n" % (seq, type(e).__name__, e))
                return 1
    s.close()
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    x = sub.add_parser("probe")
    x.add_argument("--host", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--timeout", type=float, default=3.0)
    x = sub.add_parser("udp-probe")
    x.add_argument("--host", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--timeout", type=float, default=3.0)
    x = sub.add_parser("accept-server")
    x.add_argument("--bind", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--ready", required=True)
    x = sub.add_parser("sink")
    x.add_argument("--bind", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--ready", required=True)
    x.add_argument("--result", required=True)
    x = sub.add_parser("source")
    x.add_argument("--host", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--bytes", type=int, required=True)
    x.add_argument("--seed", type=int, default=42)
    x = sub.add_parser("echo-server")
    x.add_argument("--bind", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--ready", required=True)
    x = sub.add_parser("peer-server")
    x.add_argument("--bind", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--ready", required=True)
    x.add_argument("--udp", action="store_true")
    x = sub.add_parser("ask")
    x.add_argument("--host", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--udp", action="store_true")
    x.add_argument("--timeout", type=float, default=3.0)
    x = sub.add_parser("chat-client")
    x.add_argument("--host", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--control", required=True)
    x.add_argument("--log", required=True)
    x.add_argument("--timeout", type=float, default=30.0)
    a = p.parse_args()
    return {"probe": cmd_probe, "udp-probe": cmd_udp_probe, "accept-server": cmd_accept_server, "sink": cmd_sink, "source": cmd_source,
            "echo-server": cmd_echo_server, "chat-client": cmd_chat_client,
            "peer-server": cmd_peer_server, "ask": cmd_ask}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
