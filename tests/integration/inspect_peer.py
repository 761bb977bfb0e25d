#!/usr/bin/python3
"""Traffic peers for sluice's inspection-stage integration tests
(run with Debian's /usr/bin/python3; IPv4 and IPv6 alike).

Payloads (PIECE arguments) are written as
  t:TEXT        TEXT with Python escapes (\\n, \\x00, ...) decoded to bytes
  x:HEX         bytes in hex
  r:N[:SEED]    N pseudo-random bytes (deterministic for a SEED, default 1)

  tcp-server --bind H --port P --ready FILE --out DIR [STREAM OPTIONS]
      Accepts connections forever; each is served in its own thread: the
      --send pieces are written (server to client) while everything that
      arrives is read until EOF, a reset or --idle seconds of silence; then
      the connection is closed (--shut: shut down the writing side as soon
      as the pieces are written). DIR/<client port>.json holds the outcome
      (see "result" below), DIR/<client port>.recv the exact bytes received
      and DIR/<client port>.sent the bytes written.

  tcp-client --host H --port P --result FILE [--no-shut] [--local-port N]
             [STREAM OPTIONS]
      Connects, writes the pieces while reading, then shuts down its writing
      side (unless --no-shut) and reads until EOF, a reset or --idle seconds
      of silence. FILE (JSON), FILE.recv and FILE.sent as for the server.

  STREAM OPTIONS: --send PIECE (repeatable) --chunk N (send each piece in N
      byte sends) --pause S (after every send) --idle S --nodelay
      --send-after-recv (write only once the peer's first bytes arrived)
      --send-after-eof (write only after the peer's EOF) --reset-after S
      (S seconds after writing, close with a RST, SO_LINGER 0)
      --watch-after-eof S (after the peer's EOF, watch S seconds whether a
      RST follows: recv_end "eof-then-reset").

  result JSON: local_port, connect (ok | refused | timeout | reset | error),
      sent (bytes written into the socket), sent_sha256 (of those bytes),
      send_end (ok | reset | epipe | timeout | error | stopped: ...), sends
      (send calls), recv_len, recv_sha256, recv_end (eof | reset | timeout |
      eof-then-reset | stopped | error), aborted (closed with a RST),
      tcp_state, unacked, total_retrans (TCP_INFO when the reading ended).

  udp-server --bind H --port P --ready FILE --log FILE [--reply PIECE ...]
             [--pause S]
      Appends one JSON line per datagram received ({"from", "len", "sha256",
      "hex"}) to --log; to the first datagram of each new peer it answers
      with the --reply datagrams, in order.

  udp-client --host H --port P --result FILE [--send PIECE ...] [--pause S]
             [--idle S]
      Sends each PIECE as one datagram (from one socket), then collects
      answers until --idle seconds of silence. FILE (JSON): local_port,
      sent [{"len","sha256"}], received [{"len","sha256","hex"}].

  raw-tcp --src A --sport N --dst A --dport N --result FILE
          --seg OFFSET:PIECE ... [--pause S] [--wait S] [--after PIECE]
          [--fin] [--frag N [--frag-reverse]]
      A TCP client built from raw packets (scapy builds them, raw sockets
      send and receive): handshake, then each --seg as one segment at
      sequence ISN+1+OFFSET, in the order given (so out of order and
      overlapping segments are written as such), --pause seconds apart.
      --fin sends a FIN after the highest byte. Then it waits --wait seconds
      for what the firewall answers; --after sends one more data segment
      after that wait (a client that keeps sending after a reset) and waits
      again. The local kernel must not answer for the port (the caller drops
      its RSTs). FILE (JSON): local_port, synack, rst (a RST from the peer
      arrived), rst_count, rst_before_after (RSTs before --after was sent),
      max_ack (relative to ISN+1), data (bytes the peer sent). FILE.first and
      FILE.last: the stream a receiver keeping the first (last) copy of each
      overlapping byte would assemble from the segments. --frag N: every
      data segment leaves as IP fragments of N payload bytes (a multiple of
      8), in reverse order with --frag-reverse.

  contains FILE REGEX [--caseless]      exit 0 if FILE's bytes match REGEX
  payload PIECE...                      writes the pieces' bytes to stdout
  sha256 PIECE...                       "LEN SHA256" of the pieces' bytes
  helper                                answers the shell tests' small questions
                                        (inspect_lib.sh's ins_call), one per line
  counters FILE [--get RULESET PATTERN FIELD]
      the inspect-counters file as JSON: [{"ruleset", "pattern",
      "connections", ..., "stage_errors"}]; --get prints one counter
      (PATTERN "" = the ruleset's own slot), 0 when there is no such slot
"""
import argparse
import codecs
import hashlib
import json
import os
import random
import re
import select
import socket
import struct
import sys
import threading
import time


def family_of(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def write_bytes_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def piece_bytes(spec):
    kind, _, rest = spec.partition(":")
    if kind == "t":
        return codecs.escape_decode(rest.encode("utf-8"))[0]
    if kind == "x":
        return bytes.fromhex(rest)
    if kind == "r":
        n, _, seed = rest.partition(":")
        return random.Random(int(seed or "1")).randbytes(int(n))
    raise SystemExit("bad piece %r (t:TEXT, x:HEX or r:N[:SEED])" % spec)


def sha(data):
    return hashlib.sha256(data).hexdigest()


# --- TCP stream peers ---------------------------------------------------------

TCP_STATES = ["?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT",
              "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING"]


def tcp_info(sock):
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    except OSError:
        return {"tcp_state": "closed", "unacked": None, "total_retrans": None}
    state = raw[0]
    unacked = struct.unpack_from("I", raw, 24)[0]
    total_retrans = struct.unpack_from("I", raw, 100)[0] if len(raw) >= 104 else None
    return {"tcp_state": TCP_STATES[state] if state < len(TCP_STATES) else str(state),
            "unacked": unacked, "total_retrans": total_retrans}


class Stream:
    """Writes pieces and reads everything at the same time (no deadlock when
    both ends send megabytes), recording exactly what happened."""

    def __init__(self, sock, a):
        self.sock = sock
        self.a = a
        self.received = bytearray()
        self.recv_end = None
        self.sent = bytearray()
        self.sends = 0
        self.send_end = "ok"
        self.info = None
        self.done_reading = threading.Event()
        self.got_data = threading.Event()  # the first byte (or the end) arrived
        self.lock = threading.Lock()
        self.events = []  # "eof" / "reset" in the order the two threads saw them
        self.stop = threading.Event()  # --reset-after: the reader stops
        self.aborted = False  # closed with a RST (SO_LINGER 0)

    def reader(self):
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        idle = 0.0
        while True:
            if self.stop.is_set():
                self.recv_end = "stopped"
                break
            if not poller.poll(100):
                idle += 0.1
                if idle >= self.a.idle:
                    self.recv_end = "timeout"
                    break
                continue
            idle = 0.0
            try:
                data = self.sock.recv(262144)
            except ConnectionResetError:
                self.recv_end = "reset"
                self.note("reset")
                break
            except OSError as e:
                self.recv_end = "error " + (os.strerror(e.errno) if e.errno else repr(e))
                break
            if not data:
                self.recv_end = "eof"
                self.note("eof")
                self.watch_after_eof()
                break
            self.received += data
            self.got_data.set()
        self.info = tcp_info(self.sock)
        self.done_reading.set()
        self.got_data.set()

    def watch_after_eof(self):
        """--watch-after-eof: after the peer's FIN, does a RST follow (the
        socket leaves CLOSE_WAIT for CLOSE without our doing)?"""
        end = time.monotonic() + self.a.watch_after_eof
        while time.monotonic() < end and not self.stop.is_set():
            if tcp_info(self.sock)["tcp_state"] == "CLOSE":
                self.recv_end = "eof-then-reset"
                return
            time.sleep(0.05)

    def note(self, event):
        with self.lock:
            self.events.append(event)

    def send_all(self, data):
        """False when the connection is gone or stuck."""
        view = memoryview(data)
        poller = select.poll()
        poller.register(self.sock, select.POLLOUT)
        while view:
            if not poller.poll(self.a.send_timeout * 1000):
                self.send_end = "timeout"
                return False
            try:
                n = self.sock.send(view, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
            except (BlockingIOError, InterruptedError):
                continue
            except ConnectionResetError:
                self.send_end = "reset"
                self.note("reset")
                return False
            except BrokenPipeError:
                self.send_end = "epipe"
                return False
            except OSError as e:
                self.send_end = "error " + os.strerror(e.errno)
                return False
            self.sent += view[:n]
            view = view[n:]
        return True

    def writer(self):
        chunk = self.a.chunk
        if self.a.send_after_recv:
            self.got_data.wait()
        if self.a.send_after_eof:
            self.done_reading.wait()
        for spec in self.a.send or []:
            data = piece_bytes(spec)
            parts = [data[i:i + chunk] for i in range(0, len(data), chunk)] if chunk else [data]
            for part in parts:
                if self.done_reading.is_set() and self.recv_end != "eof":
                    if self.send_end == "ok":
                        self.send_end = "stopped: " + self.recv_end
                    return
                if not self.send_all(part):
                    return
                self.sends += 1
                if self.a.pause:
                    time.sleep(self.a.pause)

    def run(self, shut):
        t = threading.Thread(target=self.reader, daemon=True)
        t.start()
        self.writer()
        if shut and self.send_end == "ok":
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        if self.a.reset_after is not None:
            # Abort: RST instead of waiting for the peer.
            time.sleep(self.a.reset_after)
            self.stop.set()
            t.join()
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.aborted = True
            return
        t.join()

    def result(self, **extra):
        # A RST is reported to one system call only: when the writer took it,
        # the reader then sees a plain end of file. The first event counts.
        recv_end = self.recv_end
        if recv_end == "eof" and self.events and self.events[0] == "reset":
            recv_end = "reset"
        r = {"sent": len(self.sent), "sent_sha256": sha(bytes(self.sent)), "send_end": self.send_end,
             "sends": self.sends, "recv_len": len(self.received), "recv_sha256": sha(bytes(self.received)),
             "recv_end": recv_end, "aborted": self.aborted}
        r.update(self.info or {})
        r.update(extra)
        return r


def set_nodelay(sock, a):
    if a.nodelay:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def cmd_tcp_server(a):
    s = socket.socket(family_of(a.bind), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a.bind, a.port))
    s.listen(64)
    os.makedirs(a.out, exist_ok=True)
    write_atomic(a.ready, "ready\n")

    def serve(conn, peer):
        set_nodelay(conn, a)
        st = Stream(conn, a)
        st.run(shut=a.shut)  # else the server closes after the client's EOF (or a reset / --idle)
        base = os.path.join(a.out, str(peer[1]))
        write_bytes_atomic(base + ".recv", bytes(st.received))
        write_bytes_atomic(base + ".sent", bytes(st.sent))
        write_atomic(base + ".json", json.dumps(st.result(peer=peer[0], peer_port=peer[1])) + "\n")
        conn.close()

    while True:
        conn, peer = s.accept()
        threading.Thread(target=serve, args=(conn, peer), daemon=True).start()


def cmd_tcp_client(a):
    s = socket.socket(family_of(a.host), socket.SOCK_STREAM)
    set_nodelay(s, a)
    if a.local_port:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("::" if ":" in a.host else "0.0.0.0", a.local_port))
    s.settimeout(a.connect_timeout)
    result = {"local_port": None}
    try:
        s.connect((a.host, a.port))
        result["connect"] = "ok"
    except ConnectionRefusedError:
        result["connect"] = "refused"
    except ConnectionResetError:
        result["connect"] = "reset"
    except (socket.timeout, TimeoutError):
        result["connect"] = "timeout"
    except OSError as e:
        result["connect"] = "error " + os.strerror(e.errno)
    if result["connect"] != "ok":
        write_bytes_atomic(a.result + ".recv", b"")
        write_bytes_atomic(a.result + ".sent", b"")
        write_atomic(a.result, json.dumps(result) + "\n")
        print(json.dumps(result))
        return 1
    s.settimeout(None)
    result["local_port"] = s.getsockname()[1]
    if a.port_file:
        write_atomic(a.port_file, "%d\n" % result["local_port"])
    st = Stream(s, a)
    st.run(shut=not a.no_shut)
    result.update(st.result())
    write_bytes_atomic(a.result + ".recv", bytes(st.received))
    write_bytes_atomic(a.result + ".sent", bytes(st.sent))
    write_atomic(a.result, json.dumps(result) + "\n")
    print(json.dumps(result))
    s.close()
    return 0


# --- UDP ----------------------------------------------------------------------

def datagram_record(data, peer=None):
    r = {"len": len(data), "sha256": sha(data), "hex": data[:64].hex()}
    if peer is not None:
        r["from"] = "%s %d" % (peer[0], peer[1])
    return r


def cmd_udp_server(a):
    s = socket.socket(family_of(a.bind), socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((a.bind, a.port))
    write_atomic(a.ready, "ready\n")
    peers = set()
    replies = [piece_bytes(p) for p in a.reply or []]
    while True:
        data, peer = s.recvfrom(70000)
        with open(a.log, "a") as f:
            f.write(json.dumps(datagram_record(data, peer)) + "\n")
        if peer[:2] in peers:
            continue
        peers.add(peer[:2])
        for r in replies:
            s.sendto(r, peer)
            if a.pause:
                time.sleep(a.pause)


def cmd_udp_client(a):
    s = socket.socket(family_of(a.host), socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.connect((a.host, a.port))
    result = {"local_port": s.getsockname()[1], "sent": [], "received": [], "errors": []}
    for spec in a.send or []:
        data = piece_bytes(spec)
        try:
            s.send(data)
            result["sent"].append(datagram_record(data))
        except OSError as e:
            result["errors"].append(os.strerror(e.errno))
        if a.pause:
            time.sleep(a.pause)
    s.settimeout(a.idle)
    while True:
        try:
            data = s.recv(70000)
        except (socket.timeout, TimeoutError):
            break
        except OSError as e:
            result["errors"].append(os.strerror(e.errno))
            continue
        result["received"].append(datagram_record(data))
    write_atomic(a.result, json.dumps(result) + "\n")
    print(json.dumps(result))
    return 0


# --- raw TCP --------------------------------------------------------------------

def cmd_raw_tcp(a):
    from scapy.layers.inet import IP, TCP, fragment
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment, fragment6

    v6 = ":" in a.dst
    if v6:
        tx = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_TCP)
        tx_hdrincl = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)  # fragments
        rx = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_TCP)
    else:
        tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    rx.setblocking(False)
    isn = random.Random().randrange(1 << 32)
    state = {"synack": False, "rst": False, "rst_count": 0, "max_ack": None, "data": bytearray(),
             "peer_isn": None, "packets": 0, "segments_sent": 0, "fragments_sent": 0}

    def send(flags, seq, ack=0, payload=b""):
        tcp = TCP(sport=a.sport, dport=a.dport, flags=flags, seq=seq % (1 << 32), ack=ack % (1 << 32),
                  window=65535)
        if payload and a.frag:
            # The segment as IP fragments of a.frag payload bytes each.
            # (a fresh identification: concurrent clients must not share a
            # reassembly queue)
            ident = random.Random().randrange(1, 1 << 16)
            if v6:
                frags = fragment6(IPv6(src=a.src, dst=a.dst) / IPv6ExtHdrFragment(id=ident << 8) / tcp / payload,
                                  48 + a.frag)
            else:
                frags = fragment(IP(src=a.src, dst=a.dst, id=ident) / tcp / payload, fragsize=a.frag)
            if a.frag_reverse:
                frags = list(reversed(frags))
            for f in frags:
                (tx_hdrincl if v6 else tx).sendto(bytes(f), (a.dst, 0))
            state["fragments_sent"] += len(frags)
            return
        if v6:
            pkt = IPv6(src=a.src, dst=a.dst) / tcp / payload
            tx.sendto(bytes(pkt)[40:], (a.dst, 0))  # the kernel adds the IPv6 header
        else:
            pkt = IP(src=a.src, dst=a.dst) / tcp / payload
            tx.sendto(bytes(pkt), (a.dst, 0))

    def drain(seconds):
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([rx], [], [], left)
            if not r:
                return
            while True:
                try:
                    raw, addr = rx.recvfrom(70000)
                except BlockingIOError:
                    break
                if v6:
                    if socket.inet_pton(socket.AF_INET6, addr[0]) != socket.inet_pton(socket.AF_INET6, a.dst):
                        continue
                    seg = TCP(raw)
                else:
                    ip = IP(raw)
                    if ip.src != a.dst:
                        continue
                    seg = ip[TCP]
                if seg.sport != a.dport or seg.dport != a.sport:
                    continue
                state["packets"] += 1
                flags = int(seg.flags)
                if flags & 0x04:
                    state["rst"] = True
                    state["rst_count"] += 1
                if flags & 0x12 == 0x12 and state["peer_isn"] is None:
                    state["synack"] = True
                    state["peer_isn"] = seg.seq
                if flags & 0x10:
                    rel = (seg.ack - (isn + 1)) % (1 << 32)
                    if rel < (1 << 31) and (state["max_ack"] is None or rel > state["max_ack"]):
                        state["max_ack"] = rel
                payload = bytes(seg.payload)
                if payload and not flags & 0x04:
                    state["data"] += payload

    send("S", isn)
    for _ in range(int(a.handshake_timeout * 5)):
        drain(0.2)
        if state["synack"]:
            break
        send("S", isn)  # a SYN lost before the firewall was ready
    result = {"isn": isn, "local_port": a.sport}
    # The stream as a receiver keeping the first (or the last) copy of
    # every byte would assemble it, from the --seg list alone.
    first, last = {}, {}
    for spec in a.seg:
        off, _, piece = spec.partition(":")
        for i, b in enumerate(piece_bytes(piece)):
            first.setdefault(int(off) + i, b)
            last[int(off) + i] = b
    for name, overlay in (("first", first), ("last", last)):
        write_bytes_atomic(a.result + "." + name, bytes(overlay.get(i, 0) for i in range(len(overlay))))
    if not state["synack"]:
        result.update(synack=False, rst=state["rst"])
        write_atomic(a.result, json.dumps(result) + "\n")
        print(json.dumps(result))
        return 1
    rcv = state["peer_isn"] + 1
    send("A", isn + 1, rcv)
    drain(a.pause)
    end = 0
    for spec in a.seg:
        off, _, piece = spec.partition(":")
        data = piece_bytes(piece)
        off = int(off)
        end = max(end, off + len(data))
        send("PA", isn + 1 + off, rcv, data)
        state["segments_sent"] += 1
        drain(a.pause)
    if a.fin:
        send("FA", isn + 1 + end, rcv)
    drain(a.wait)
    rst_before_after = state["rst_count"]
    if a.after:
        data = piece_bytes(a.after)
        send("PA", isn + 1 + end + (1 if a.fin else 0), rcv, data)
        drain(a.wait)
    result.update(synack=True, rst=state["rst"], rst_count=state["rst_count"], rst_before_after=rst_before_after,
                  max_ack=state["max_ack"], data=state["data"].decode("latin-1"), packets=state["packets"],
                  segments_sent=state["segments_sent"], fragments_sent=state["fragments_sent"], stream_end=end)
    write_atomic(a.result, json.dumps(result) + "\n")
    print(json.dumps(result))
    return 0


# --- small tools ------------------------------------------------------------------

def cmd_contains(a):
    with open(a.file, "rb") as f:
        data = f.read()
    flags = re.IGNORECASE if a.caseless else 0
    return 0 if re.search(a.regex.encode("latin-1"), data, flags) else 1


def cmd_payload(a):
    for p in a.pieces:
        sys.stdout.buffer.write(piece_bytes(p))
    return 0


def cmd_sha256(a):
    data = b"".join(piece_bytes(p) for p in a.pieces)
    print(len(data), sha(data))
    return 0


COUNTER_NAMES = ["connections", "datagrams", "bytes_client_to_server", "bytes_server_to_client", "matches",
                 "resets", "drops", "alerts", "offloaded", "stage_errors", "handoffs", "handoff_refused"]
SLOT_SIZE = 48 + 64 + 8 * len(COUNTER_NAMES)


def read_counters(path):
    # userspace/inspect/counter_layout.h (version 2): a 64-byte header, then
    # slots of two names and the counters.
    with open(path, "rb") as f:
        data = f.read()
    magic, version, slot_count, slots_used = struct.unpack_from("<QIII", data, 0)
    if magic != 0x54434E494543_4C53 or version != 2:
        raise ValueError("bad counters file: magic %x version %d" % (magic, version))
    out = []
    for i in range(min(slots_used, slot_count)):
        base = 64 + i * SLOT_SIZE
        ruleset = data[base:base + 48].split(b"\0")[0].decode()
        pattern = data[base + 48:base + 112].split(b"\0")[0].decode()
        values = struct.unpack_from("<%dQ" % len(COUNTER_NAMES), data, base + 112)
        row = {"ruleset": ruleset, "pattern": pattern}
        row.update(zip(COUNTER_NAMES, values))
        out.append(row)
    return out


def cmd_counters(a):
    try:
        out = read_counters(a.file)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    if a.get:
        ruleset, pattern, field = a.get
        print(sum(r[field] for r in out if r["ruleset"] == ruleset and r["pattern"] == pattern))
    else:
        print(json.dumps(out))
    return 0


# --- helper service for the shell tests --------------------------------------------
# One Python process answers the tests' many small questions (a process per
# question costs seconds on a loaded machine). Requests are lines of
# tab-separated words, answers one line "RC<TAB>TEXT".

def helper_answer(cmd, args):
    if cmd == "jf":  # FILE KEY...: fields, space separated
        try:
            with open(args[0]) as f:
                d = json.load(f)
        except Exception:
            d = {}

        def text(v):
            return "" if v is None else (json.dumps(v) if isinstance(v, (list, dict)) else str(v))
        return 0, " ".join(text(d.get(k)) for k in args[1:])
    if cmd == "contains":  # FILE REGEX: 0 match, 1 none, 2 no file
        try:
            with open(args[0], "rb") as f:
                data = f.read()
        except OSError:
            return 2, ""
        return (0 if re.search(args[1].encode("latin-1"), data) else 1), ""
    if cmd == "counter":  # FILE RULESET PATTERN FIELD
        try:
            rows = read_counters(args[0])
        except OSError:
            return 0, "0"  # no stage has written counters yet
        except ValueError as e:  # a layout this reader does not know: say so, never 0
            return 1, "unreadable:" + str(e).replace(" ", "_")
        return 0, str(sum(r[args[3]] for r in rows if r["ruleset"] == args[1] and r["pattern"] == args[2]))
    if cmd == "stat":  # FILE NAME: a counter of `sluice show stats --json`
        try:
            with open(args[0]) as f:
                return 0, str(json.load(f)["counters"].get(args[1], "missing"))
        except (OSError, ValueError, KeyError):
            return 0, "missing"
    if cmd == "sha":  # PIECE...: sha256 of their bytes
        return 0, sha(b"".join(piece_bytes(p) for p in args))
    if cmd == "payload_to":  # FILE PIECE...
        write_bytes_atomic(args[0], b"".join(piece_bytes(p) for p in args[1:]))
        return 0, ""
    if cmd == "udp_seen":  # LOG PORT: sha256 of the datagrams from that port
        out = []
        with open(args[0]) as f:
            for line in f:
                r = json.loads(line)
                if r["from"].split()[-1] == args[1]:
                    out.append(r["sha256"])
        return 0, " ".join(out)
    if cmd == "udp_got":  # RESULT: sha256 of the datagrams a udp-client received
        try:
            with open(args[0]) as f:
                return 0, " ".join(r["sha256"] for r in json.load(f)["received"])
        except (OSError, ValueError):
            return 0, ""
    return 3, "unknown helper request " + cmd


def cmd_helper(a):
    for line in sys.stdin:
        words = line.rstrip("\n").split("\t")
        try:
            rc, text = helper_answer(words[0], words[1:])
        except Exception as e:  # an answer, never a dead helper
            rc, text = 3, "%s: %r" % (words[0], e)
        sys.stdout.write("%d\t%s\n" % (rc, text.replace("\n", " ")))
        sys.stdout.flush()
    return 0


def cmd_helper_once(a):
    rc, text = helper_answer(a.words[0], a.words[1:])
    print("%d\t%s" % (rc, text))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def stream_opts(x):
        x.add_argument("--send", action="append")
        x.add_argument("--chunk", type=int, default=0)
        x.add_argument("--pause", type=float, default=0.0)
        x.add_argument("--idle", type=float, default=5.0)
        x.add_argument("--send-timeout", type=float, default=5.0)
        x.add_argument("--nodelay", action="store_true")
        x.add_argument("--send-after-recv", action="store_true")
        x.add_argument("--send-after-eof", action="store_true")
        x.add_argument("--reset-after", type=float)
        x.add_argument("--watch-after-eof", type=float, default=0.0)
        x.add_argument("--shut", action="store_true")

    x = sub.add_parser("tcp-server")
    x.add_argument("--bind", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--ready", required=True)
    x.add_argument("--out", required=True)
    stream_opts(x)
    x.set_defaults(fn=cmd_tcp_server)

    x = sub.add_parser("tcp-client")
    x.add_argument("--host", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--result", required=True)
    x.add_argument("--port-file")
    x.add_argument("--connect-timeout", type=float, default=5.0)
    x.add_argument("--no-shut", action="store_true")
    x.add_argument("--local-port", type=int)
    stream_opts(x)
    x.set_defaults(fn=cmd_tcp_client)

    x = sub.add_parser("udp-server")
    x.add_argument("--bind", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--ready", required=True)
    x.add_argument("--log", required=True)
    x.add_argument("--reply", action="append")
    x.add_argument("--pause", type=float, default=0.1)
    x.set_defaults(fn=cmd_udp_server)

    x = sub.add_parser("udp-client")
    x.add_argument("--host", required=True)
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--result", required=True)
    x.add_argument("--send", action="append")
    x.add_argument("--pause", type=float, default=0.1)
    x.add_argument("--idle", type=float, default=1.5)
    x.set_defaults(fn=cmd_udp_client)

    x = sub.add_parser("raw-tcp")
    x.add_argument("--src", required=True)
    x.add_argument("--sport", type=int, required=True)
    x.add_argument("--dst", required=True)
    x.add_argument("--dport", type=int, required=True)
    x.add_argument("--result", required=True)
    x.add_argument("--seg", action="append", required=True)
    x.add_argument("--pause", type=float, default=0.15)
    x.add_argument("--wait", type=float, default=1.0)
    x.add_argument("--after")
    x.add_argument("--fin", action="store_true")
    x.add_argument("--handshake-timeout", type=float, default=3.0)
    x.add_argument("--frag", type=int, default=0)
    x.add_argument("--frag-reverse", action="store_true")
    x.set_defaults(fn=cmd_raw_tcp)

    x = sub.add_parser("contains")
    x.add_argument("file")
    x.add_argument("regex")
    x.add_argument("--caseless", action="store_true")
    x.set_defaults(fn=cmd_contains)

    x = sub.add_parser("payload")
    x.add_argument("pieces", nargs="+")
    x.set_defaults(fn=cmd_payload)

    x = sub.add_parser("sha256")
    x.add_argument("pieces", nargs="+")
    x.set_defaults(fn=cmd_sha256)

    x = sub.add_parser("counters")
    x.add_argument("file")
    x.add_argument("--get", nargs=3, metavar=("RULESET", "PATTERN", "FIELD"))
    x.set_defaults(fn=cmd_counters)

    x = sub.add_parser("helper")
    x.set_defaults(fn=cmd_helper)
    x = sub.add_parser("helper-once")
    x.add_argument("words", nargs="+")
    x.set_defaults(fn=cmd_helper_once)

    a = ap.parse_args()
    sys.exit(a.fn(a) or 0)


if __name__ == "__main__":
    main()
