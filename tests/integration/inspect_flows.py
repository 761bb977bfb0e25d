#!/usr/bin/python3
"""Traffic for the inspection-stage operations tests (test_inspect_reload.sh,
test_inspect_failmode.sh, test_inspect_counters.sh). Run with Debian's
/usr/bin/python3; IPv4 and IPv6 alike (an address with ':' is IPv6).

Payload SPEC: parts joined by '+': fill:N (N bytes of the digits 0-9, which
no test pattern matches), text:T (T percent-decoded, so '+' is %2B and a
space may be written %20), hex:HEX. Example: fill:100+text:flag{abc}.

Long-lived processes take commands from a FIFO, one per line, each starting
with a token the answer repeats: the answer is the log line "TOKEN ok ..." or
"TOKEN fail ...". `ctl` writes one command and waits for its answer.

  server --bind H --port P --ready FILE --log FILE [--control FIFO]
         [--data-dir DIR] [--echo] [--answer SPEC]
      TCP server, a thread per connection, connections named by the
      client's port. Logs "accept PORT" and, when one ends,
      "end PORT eof|reset|error BYTES SHA256". With --data-dir every byte a
      connection received is appended to DIR/PORT.bin as it arrives. --echo
      sends every byte back; --answer sends SPEC once the client half-closed.
      After the client's EOF the server half-closes too.
      Commands: send PORT SPEC | wait PORT MINBYTES TIMEOUT (until the
      connection received MINBYTES or ended) | end PORT TIMEOUT (until it
      ended) | info PORT | reset PORT (close with RST).
      Answers to wait/end/info: "ok STATE BYTES SHA256", STATE open | eof |
      reset | error | none (no such connection).

  client --host H --port P --control FIFO --log FILE [--sport N] [--timeout S]
      One long-lived TCP connection. Logs "port N" once connected, or
      "connect-failed WORD" (refused, timeout, ...) and exits.
      Commands: send SPEC -> "ok sent N" | "fail send reset|pipe|ERRNO";
      expect SPEC TIMEOUT -> reads len(SPEC) bytes: "ok expect N" |
      "fail expect GOT STATE" (STATE eof|reset|timeout|mismatch);
      state TIMEOUT -> waits up to TIMEOUT for the connection to end, reading
      whatever arrives: "ok STATE READ" with STATE open (nothing ended it) |
      eof | reset; shutdown (half-close) | close | reset (RST) | quit.

  ctl --control FIFO --log FILE [--timeout S] COMMAND...
      Sends one command, prints the answer without its token; exit 0 for
      "ok", 1 for "fail", 2 when no answer came (or nobody reads the FIFO).

  tcp --host H --port P --send SPEC [--send SPEC ...] [--gap S] [--timeout S]
      One short connection: sends the pieces (--gap seconds apart),
      half-closes, reads to the end. Prints "STATE SENT RECEIVED SHA256",
      STATE eof | reset | timeout (nothing ended it) | refused |
      connect-timeout | error-ERRNO.

  stream --host H --port P --stop FILE --result FILE [--chunk N] [--interval S]
      A long paced transfer: fill bytes in chunks until FILE exists, then
      half-close and read to the end. Writes "STATE BYTES SHA256" to --result
      (STATE eof | reset | error-ERRNO | timeout).

  udp --host H --port P [--sport N] --send SPEC [--send SPEC ...] [--timeout S]
      Sends each datagram from one socket (--sport: a fixed source port, so
      calls continue one flow) and waits for one answer after each. Prints
      one word per datagram on one line: echoed (the answer equals the
      datagram) | answered (a different answer) | timeout | icmp-ERRNO.

  udp-echo --bind H --port P --ready FILE --log FILE [--reply SPEC]
      Answers every datagram with itself (or with SPEC); logs
      "dgram PORT BYTES SHA256 HEXDATA" for each one received.
"""
import argparse
import errno
import hashlib
import os
import select
import socket
import sys
import threading
import time
import urllib.parse
import uuid


# --- payloads ---------------------------------------------------------------

def payload(spec):
    out = bytearray()
    for part in spec.split("+"):
        kind, _, arg = part.partition(":")
        if kind == "fill":
            n = int(arg)
            out += (b"0123456789" * (n // 10 + 1))[:n]
        elif kind == "text":
            out += urllib.parse.unquote_to_bytes(arg)
        elif kind == "hex":
            out += bytes.fromhex(arg)
        else:
            raise ValueError("bad payload part %r" % part)
    return bytes(out)


def family_of(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def err_word(e):
    if isinstance(e, ConnectionResetError):
        return "reset"
    if isinstance(e, BrokenPipeError):
        return "pipe"
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "timeout"
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    return errno.errorcode.get(getattr(e, "errno", None) or 0, "error")


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


class Log:
    """Appends whole lines, flushed, from several threads."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1) if path else None
        self.lock = threading.Lock()

    def line(self, text):
        if self.f:
            with self.lock:
                self.f.write(text + "\n")
                self.f.flush()


def command_lines(fifo):
    """Lines from a FIFO opened read-write, so writers coming and going never
    make it return EOF."""
    fd = os.open(fifo, os.O_RDWR)
    buf = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            line = line.decode().strip()
            if line:
                yield line


# --- TCP server ---------------------------------------------------------------

class Conn:
    def __init__(self, sock, port):
        self.sock = sock
        self.port = port
        self.state = "open"
        self.bytes = 0
        self.sha = hashlib.sha256()
        self.cond = threading.Condition()
        self.send_lock = threading.Lock()

    def summary(self):
        with self.cond:
            return "%s %d %s" % (self.state, self.bytes, self.sha.hexdigest())


def cmd_server(a):
    log = Log(a.log)
    conns = {}
    conns_lock = threading.Lock()
    answer = payload(a.answer) if a.answer else None

    def serve(conn):
        data_file = open(os.path.join(a.data_dir, "%d.bin" % conn.port), "ab") if a.data_dir else None
        state = "error"
        try:
            while True:
                try:
                    d = conn.sock.recv(65536)
                except ConnectionResetError:
                    state = "reset"
                    break
                except OSError as e:
                    state = "error-" + err_word(e)
                    break
                if not d:
                    state = "eof"
                    break
                if data_file:
                    data_file.write(d)
                    data_file.flush()
                with conn.cond:
                    conn.bytes += len(d)
                    conn.sha.update(d)
                    conn.cond.notify_all()
                if a.echo:
                    try:
                        with conn.send_lock:
                            conn.sock.sendall(d)
                    except OSError:
                        pass
            if state == "eof":
                try:
                    with conn.send_lock:
                        if answer:
                            conn.sock.sendall(answer)
                        conn.sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        finally:
            with conn.cond:
                conn.state = state
                conn.cond.notify_all()
            log.line("end %d %s" % (conn.port, conn.summary()))
            if data_file:
                data_file.close()
            # The socket stays open (a reset command may still name it);
            # the peer has seen our FIN already.

    def control():
        for line in command_lines(a.control):
            threading.Thread(target=handle, args=(line,), daemon=True).start()

    def handle(line):
        token, _, rest = line.partition(" ")
        words = rest.split(" ")
        try:
            cmd, port = words[0], int(words[1])
            with conns_lock:
                conn = conns.get(port)
            if cmd == "send":
                if not conn:
                    log.line("%s fail none" % token)
                    return
                data = payload(" ".join(words[2:]))
                try:
                    with conn.send_lock:
                        conn.sock.sendall(data)
                    log.line("%s ok sent %d" % (token, len(data)))
                except OSError as e:
                    log.line("%s fail send %s" % (token, err_word(e)))
                return
            if cmd == "reset":
                if conn:
                    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                    conn.sock.close()
                log.line("%s ok" % token)
                return
            if cmd in ("wait", "end"):
                want = int(words[2]) if cmd == "wait" else None
                deadline = time.monotonic() + float(words[-1])
                while True:
                    with conns_lock:
                        conn = conns.get(port)
                    if conn:
                        with conn.cond:
                            done = conn.state != "open" or (want is not None and conn.bytes >= want)
                            if not done:
                                conn.cond.wait(max(0.0, min(0.2, deadline - time.monotonic())))
                        if done:
                            break
                    else:
                        time.sleep(0.05)
                    if time.monotonic() >= deadline:
                        break
                if not conn:
                    log.line("%s fail none 0 -" % token)
                    return
                s = conn.summary()
                ok = conn.state != "open" if cmd == "end" else conn.bytes >= want
                log.line("%s %s %s" % (token, "ok" if ok else "fail", s))
                return
            if cmd == "info":
                log.line("%s ok %s" % (token, conn.summary() if conn else "none 0 -"))
                return
            log.line("%s fail unknown-command" % token)
        except Exception as e:  # an answer always comes
            log.line("%s fail exception %s" % (token, repr(e).replace(" ", "_")))

    ls = socket.socket(family_of(a.bind), socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.bind, a.port))
    ls.listen(64)
    if a.control:
        threading.Thread(target=control, daemon=True).start()
    write_atomic(a.ready, "ready\n")
    while True:
        s, peer = ls.accept()
        conn = Conn(s, peer[1])
        with conns_lock:
            conns[conn.port] = conn
        log.line("accept %d" % conn.port)
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


# --- TCP client (FIFO-driven) ---------------------------------------------------

def connect(host, port, sport, timeout):
    s = socket.socket(family_of(host), socket.SOCK_STREAM)
    if sport:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("::" if ":" in host else "0.0.0.0", sport))
    s.settimeout(timeout)
    s.connect((host, port))
    return s


def read_until(sock, want, timeout):
    """Reads up to `want` bytes (None: until the end). Returns (data, state),
    state eof | reset | timeout | complete."""
    data = bytearray()
    deadline = time.monotonic() + timeout
    while want is None or len(data) < want:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(data), "timeout"
        sock.settimeout(left)
        try:
            d = sock.recv(65536 if want is None else min(65536, want - len(data)))
        except (socket.timeout, TimeoutError):
            return bytes(data), "timeout"
        except ConnectionResetError:
            return bytes(data), "reset"
        except OSError as e:
            return bytes(data), "error-" + err_word(e)
        if not d:
            return bytes(data), "eof"
        data += d
    return bytes(data), "complete"


def cmd_client(a):
    log = Log(a.log)
    try:
        s = connect(a.host, a.port, a.sport, a.timeout)
    except OSError as e:
        log.line("connect-failed %s" % err_word(e))
        return 1
    log.line("port %d" % s.getsockname()[1])
    ended = None  # eof | reset once seen
    for line in command_lines(a.control):
        token, _, rest = line.partition(" ")
        cmd, _, arg = rest.partition(" ")
        try:
            if cmd == "send":
                data = payload(arg)
                s.settimeout(a.timeout)
                try:
                    s.sendall(data)
                    log.line("%s ok sent %d" % (token, len(data)))
                except OSError as e:
                    # The error is reported once; later reads see only EOF.
                    if ended is None and err_word(e) == "reset":
                        ended = "reset"
                    log.line("%s fail send %s" % (token, err_word(e)))
            elif cmd == "expect":
                spec, _, t = arg.rpartition(" ")
                want = payload(spec)
                if ended:
                    log.line("%s fail expect 0 %s" % (token, ended))
                    continue
                got, state = read_until(s, len(want), float(t))
                if state == "complete" and got == want:
                    log.line("%s ok expect %d" % (token, len(got)))
                else:
                    if state in ("eof", "reset"):
                        ended = state
                    log.line("%s fail expect %d %s" % (token, len(got), "mismatch" if state == "complete" else state))
            elif cmd == "state":
                if ended:
                    log.line("%s ok %s 0" % (token, ended))
                    continue
                got, state = read_until(s, None, float(arg))
                state = "open" if state == "timeout" else state
                if state in ("eof", "reset"):
                    ended = state
                log.line("%s ok %s %d" % (token, state, len(got)))
            elif cmd == "shutdown":
                try:
                    s.shutdown(socket.SHUT_WR)
                    log.line("%s ok" % token)
                except OSError as e:
                    log.line("%s fail shutdown %s" % (token, err_word(e)))
            elif cmd == "reset":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                s.close()
                log.line("%s ok" % token)
                return 0
            elif cmd in ("close", "quit"):
                s.close()
                log.line("%s ok" % token)
                return 0
            else:
                log.line("%s fail unknown-command" % token)
        except Exception as e:
            log.line("%s fail exception %s" % (token, repr(e).replace(" ", "_")))
    return 0


def cmd_ctl(a):
    token = uuid.uuid4().hex[:12]
    try:
        fd = os.open(a.control, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        print("no-reader %s" % err_word(e))
        return 2
    os.write(fd, ("%s %s\n" % (token, " ".join(a.command))).encode())
    os.close(fd)
    deadline = time.monotonic() + a.timeout
    prefix = token + " "
    while time.monotonic() < deadline:
        try:
            with open(a.log) as f:
                for line in f:
                    if line.startswith(prefix):
                        answer = line[len(prefix):].strip()
                        print(answer)
                        return 0 if answer.startswith("ok") else 1
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    print("no-answer")
    return 2


# --- short-lived TCP, long transfer -------------------------------------------

def cmd_tcp(a):
    try:
        s = connect(a.host, a.port, a.sport, a.timeout)
    except (socket.timeout, TimeoutError):
        print("connect-timeout 0 0 -")
        return 0
    except ConnectionRefusedError:
        print("refused 0 0 -")
        return 0
    except OSError as e:
        print("error-%s 0 0 -" % err_word(e))
        return 0
    sent = 0
    state = None
    for i, spec in enumerate(a.send):
        if i and a.gap:
            time.sleep(a.gap)
        data = payload(spec)
        try:
            s.sendall(data)
            sent += len(data)
        except OSError as e:
            state = err_word(e)
            break
    got = b""
    if state is None:
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        got, state = read_until(s, None, a.timeout)
    elif state != "reset":
        state = "error-" + state
    print("%s %d %d %s" % (state, sent, len(got), hashlib.sha256(got).hexdigest()))
    s.close()
    return 0


def cmd_stream(a):
    sha = hashlib.sha256()
    total = 0
    chunk = payload("fill:%d" % a.chunk)
    state = "eof"
    try:
        s = connect(a.host, a.port, None, 10)
        while not os.path.exists(a.stop):
            s.sendall(chunk)
            sha.update(chunk)
            total += len(chunk)
            time.sleep(a.interval)
        s.shutdown(socket.SHUT_WR)
        _, state = read_until(s, None, 10)
    except OSError as e:
        state = err_word(e) if isinstance(e, ConnectionResetError) else "error-" + err_word(e)
    write_atomic(a.result, "%s %d %s\n" % (state, total, sha.hexdigest()))
    return 0


# --- UDP ----------------------------------------------------------------------

def cmd_udp(a):
    s = socket.socket(family_of(a.host), socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if a.sport:
        s.bind(("::" if ":" in a.host else "0.0.0.0", a.sport))
    s.connect((a.host, a.port))
    words = []
    for spec in a.send:
        data = payload(spec)
        # Late answers to an earlier datagram are not this one's.
        while select.select([s], [], [], 0)[0]:
            try:
                s.recv(65536)
            except OSError:
                pass
        try:
            s.send(data)
            s.settimeout(a.timeout)
            answer = s.recv(65536)
            words.append("echoed" if answer == data else "answered")
        except (socket.timeout, TimeoutError):
            words.append("timeout")
        except OSError as e:
            words.append("icmp-" + err_word(e))
    print(" ".join(words))
    return 0


def cmd_udp_echo(a):
    log = Log(a.log)
    reply = payload(a.reply) if a.reply else None
    s = socket.socket(family_of(a.bind), socket.SOCK_DGRAM)
    s.bind((a.bind, a.port))
    write_atomic(a.ready, "ready\n")
    while True:
        data, peer = s.recvfrom(65536)
        log.line("dgram %d %d %s %s" % (peer[1], len(data), hashlib.sha256(data).hexdigest(), data.hex()))
        s.sendto(reply if reply is not None else data, peer)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    c = sub.add_parser("server")
    c.add_argument("--bind", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--ready", required=True)
    c.add_argument("--log", required=True)
    c.add_argument("--control")
    c.add_argument("--data-dir")
    c.add_argument("--echo", action="store_true")
    c.add_argument("--answer")

    c = sub.add_parser("client")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--control", required=True)
    c.add_argument("--log", required=True)
    c.add_argument("--sport", type=int)
    c.add_argument("--timeout", type=float, default=5)

    c = sub.add_parser("ctl")
    c.add_argument("--control", required=True)
    c.add_argument("--log", required=True)
    c.add_argument("--timeout", type=float, default=20)
    c.add_argument("command", nargs="+")

    c = sub.add_parser("tcp")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--sport", type=int)
    c.add_argument("--send", action="append", default=[])
    c.add_argument("--gap", type=float, default=0)
    c.add_argument("--timeout", type=float, default=5)

    c = sub.add_parser("stream")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--stop", required=True)
    c.add_argument("--result", required=True)
    c.add_argument("--chunk", type=int, default=16384)
    c.add_argument("--interval", type=float, default=0.01)

    c = sub.add_parser("udp")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--sport", type=int)
    c.add_argument("--send", action="append", default=[])
    c.add_argument("--timeout", type=float, default=2)

    c = sub.add_parser("udp-echo")
    c.add_argument("--bind", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--ready", required=True)
    c.add_argument("--log", required=True)
    c.add_argument("--reply")

    a = p.parse_args()
    fn = {"server": cmd_server, "client": cmd_client, "ctl": cmd_ctl, "tcp": cmd_tcp, "stream": cmd_stream,
          "udp": cmd_udp, "udp-echo": cmd_udp_echo}[a.cmd]
    return fn(a) or 0


if __name__ == "__main__":
    sys.exit(main())
