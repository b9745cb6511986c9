"""Test helper run inside a namespace: send or receive numbered UDP datagrams.

    udp_tool.py send IP PORT COUNT RATE      datagrams carry (seq, send time ns), 100 bytes
    udp_tool.py recv PORT COUNT IDLE_S       prints "ready", then one JSON line:
                                             {"seqs": [...], "owd_ns": [...]} in arrival order
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time


def send(ip: str, port: int, count: int, rate: float) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    start = time.monotonic()
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        s.sendto(struct.pack("!QQ", i, time.time_ns()).ljust(100, b"\0"), (ip, port))


def recv(port: int, count: int, idle: float) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", port))
    s.settimeout(idle)
    print("ready", flush=True)
    seqs, owd = [], []
    try:
        while len(seqs) < count:
            data = s.recv(2048)
            now = time.time_ns()
            seq, sent = struct.unpack("!QQ", data[:16])
            seqs.append(seq)
            owd.append(now - sent)
    except TimeoutError:
        pass
    print(json.dumps({"seqs": seqs, "owd_ns": owd}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        recv(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
