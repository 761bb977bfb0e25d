#!/usr/bin/env python3
"""A small HTTPS server for the egress tests: answers every GET or HEAD with
200 and a body naming the address it was reached on, so a test can tell which
server a name led to. Listens on [::]:PORT for both families. A GET or HEAD of
/bytes/N answers instead with a body of N bytes (at most 1 GiB), for
`sluice bench egress`'s download scenario. BACKLOG, when given, is the
listen queue's length (default: socketserver's 5, too short for 100 clients
connecting at once: the overflow's SYNs are dropped and retried after 1 s).

usage: https_server.py CERT KEY PORT [BACKLOG]
"""
import http.server
import socket
import ssl
import sys


CHUNK = b"x" * 65536
MAX_BYTES = 1 << 30


class Handler(http.server.BaseHTTPRequestHandler):
    def _sized(self, body: bool) -> bool:
        """Answers /bytes/N with N bytes; False for any other path."""
        if not self.path.startswith("/bytes/"):
            return False
        try:
            size = int(self.path[len("/bytes/"):])
        except ValueError:
            return False
        if size < 0 or size > MAX_BYTES:
            return False
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        while body and size > 0:
            n = min(size, len(CHUNK))
            self.wfile.write(CHUNK[:n] if n < len(CHUNK) else CHUNK)
            size -= n
        return True

    def _answer(self, body: bool) -> None:
        if self._sized(body):
            return
        address = self.connection.getsockname()[0]
        if address.startswith("::ffff:"):  # an IPv4 client on the dual-stack socket
            address = address[len("::ffff:"):]
        text = f"sluice-egress-test {address}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if body:
            self.wfile.write(text)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def log_message(self, fmt: str, *args) -> None:
        sys.stderr.write("%s %s\n" % (self.client_address[0], fmt % args))


class DualStackServer(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def main() -> None:
    cert, key, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if len(sys.argv) > 4:
        DualStackServer.request_queue_size = int(sys.argv[4])
    server = DualStackServer(("::", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening on [::]:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
