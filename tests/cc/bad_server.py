"""A misbehaving HTTP/1.1 server for the probe's error tests, run inside a test namespace:
``/loop`` redirects to itself forever, ``/short`` promises 200,000 bytes and closes after 1,000,
``/obj/N`` is an N-byte object, anything else 64 kB; every answer names the client's address in
``X-Peer`` (to check NAT). usage: python bad_server.py PORT"""

from __future__ import annotations

import socketserver
import sys


class Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        line = self.rfile.readline().decode("latin-1")
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        method, path = (line.split() + ["", ""])[:2]
        peer = f"X-Peer: {self.client_address[0]}\r\n".encode()
        if path.startswith("/loop"):
            self.wfile.write(b"HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")
        elif path.startswith("/short"):
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n"
                             b"Connection: close\r\n\r\n")
            if method != "HEAD":
                self.wfile.write(b"x" * 1000)
        else:
            size = int(path[5:]) if path.startswith("/obj/") and path[5:].isdigit() else 65536
            self.wfile.write(b"HTTP/1.1 200 OK\r\n" + peer + f"Content-Length: {size}\r\n"
                             "Connection: close\r\n\r\n".encode())
            if method != "HEAD":
                self.wfile.write(b"y" * size)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


if __name__ == "__main__":
    with Server(("0.0.0.0", int(sys.argv[1])), Handler) as srv:
        print("ready", flush=True)
        srv.serve_forever()
