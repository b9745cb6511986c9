"""A misbehaving HTTP/1.1 server for the probe's error tests, run inside a test namespace:
``/loop`` redirects to itself forever, ``/short`` promises 200,000 bytes and closes after 1,000,
anything else is a 64 kB object. usage: python bad_server.py PORT"""

from __future__ import annotations

import socketserver
import sys


class Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        line = self.rfile.readline().decode("latin-1")
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        method, path = (line.split() + ["", ""])[:2]
        if path.startswith("/loop"):
            self.wfile.write(b"HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n")
        elif path.startswith("/short"):
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n")
            if method != "HEAD":
                self.wfile.write(b"x" * 1000)
        else:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 65536\r\nConnection: close"
                             b"\r\n\r\n")
            if method != "HEAD":
                self.wfile.write(b"y" * 65536)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


if __name__ == "__main__":
    with Server(("0.0.0.0", int(sys.argv[1])), Handler) as srv:
        print("ready", flush=True)
        srv.serve_forever()
