#!/usr/bin/env python3
"""A small HTTPS server for the egress tests: answers every GET or HEAD with
200 and a body naming the address it was reached on, so a test can tell which
server a name led to. Listens on [::]:PORT for both families.

usage: https_server.py CERT KEY PORT
"""
import http.server
import socket
import ssl
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self, body: bool) -> None:
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
    server = DualStackServer(("::", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening on [::]:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
