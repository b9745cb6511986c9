"""The stand-in internet's name server: ``python standin_dns.py ADDRESS '{"name": "ip"}'``
answers A queries for the names given (RFC 1035 Sec. 4.1), an empty NOERROR for their other
types (AAAA, HTTPS: Chromium asks for those too) and NXDOMAIN for every other name. Prints
``ready`` once it listens on ADDRESS:53 (UDP)."""

from __future__ import annotations

import json
import socket
import struct
import sys

NOERROR, NXDOMAIN = 0, 3
TYPE_A, CLASS_IN = 1, 1


def parse_question(msg: bytes) -> tuple[int, str, int, int] | None:
    """(id, name, qtype, end of the question) of a query, or None."""
    if len(msg) < 12:
        return None
    qid, _flags, qd = struct.unpack("!HHH", msg[:6])
    if qd != 1:
        return None
    labels, i = [], 12
    while i < len(msg) and msg[i]:
        n = msg[i]
        labels.append(msg[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    if i + 5 > len(msg):
        return None
    qtype, _qclass = struct.unpack("!HH", msg[i + 1:i + 5])
    return qid, ".".join(labels).lower(), qtype, i + 5


def answer(msg: bytes, names: dict[str, str]) -> bytes | None:
    q = parse_question(msg)
    if q is None:
        return None
    qid, name, qtype, end = q
    rcode = NOERROR if name in names else NXDOMAIN
    answers = b""
    if rcode == NOERROR and qtype == TYPE_A:
        answers = (struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, 60, 4)
                   + socket.inet_aton(names[name]))
    flags = 0x8180 | rcode  # response, recursion desired and available
    head = struct.pack("!HHHHHH", qid, flags, 1, 1 if answers else 0, 0, 0)
    return head + msg[12:end] + answers


def main() -> None:
    address, names = sys.argv[1], json.loads(sys.argv[2])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((address, 53))
    print("ready", flush=True)
    while True:
        msg, peer = sock.recvfrom(4096)
        reply = answer(msg, names)
        if reply is not None:
            sock.sendto(reply, peer)


if __name__ == "__main__":
    main()
